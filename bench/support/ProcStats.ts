/** CPU and memory of processes from Linux /proc (zero elsewhere, and for a process that is gone). */
import { execFileSync } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"

const clockTicks = (() => {
  try {
    return Number.parseInt(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim(), 10) || 100
  } catch {
    return 100
  }
})()

export const hasProc = (() => {
  try {
    readFileSync("/proc/self/stat")
    return true
  } catch {
    return false
  }
})()

/** CPU seconds (user + system, all threads) of a process, or 0. */
export const procCpu = (pid: number | undefined): number => {
  if (pid === undefined || !hasProc) return 0
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) / clockTicks
  } catch {
    return 0
  }
}

/** Resident set size of a process in bytes, or 0. */
export const procRss = (pid: number | undefined): number => {
  if (pid === undefined || !hasProc) return 0
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
    return match === null ? 0 : Number(match[1]) * 1024
  } catch {
    return 0
  }
}

/** The soft limit on open files of this process (what its children inherit), or undefined. */
export const openFilesLimit = (): number | undefined => {
  if (!hasProc) return undefined
  const match = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync("/proc/self/limits", "utf8"))
  return match === null ? undefined : match[1] === "unlimited" ? Number.POSITIVE_INFINITY : Number(match[1])
}

/** A process and its descendants (Linux: the children files under /proc/<pid>/task). */
export const procTree = (pid: number | undefined): Array<number> => {
  if (pid === undefined || !hasProc) return []
  const all = [pid]
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      for (
        const child of readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").split(" ").filter((s) => s !== "")
      ) {
        all.push(...procTree(Number(child)))
      }
    }
  } catch {
    // gone meanwhile
  }
  return all
}
