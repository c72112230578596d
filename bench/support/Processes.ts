/**
 * Child processes of a benchmark: `node <args>` started on a free loopback
 * port and awaited until its output says it is ready, its output drained and
 * kept (the last 64 KiB), stopped with SIGTERM (SIGKILL after 5 s). Every
 * child is killed on cleanup (src: Lifecycle.ts).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { freePortNow } from "../../test/support/FreePort.ts"

/** The repository's root: children run from there. */
export const root = fileURLToPath(new URL("../..", import.meta.url))

export const children = new Set<ChildProcess>()

/** Shared with Lifecycle: `stopping` once cleanup began; `childDied` once a child exited while it was needed. */
export const state = { stopping: false, childDied: false }

/** Children being stopped on purpose (a restart): their exit is not a failure. */
const expectedExits = new WeakSet<ChildProcess>()

export const freePort = freePortNow

export interface Started {
  readonly child: ChildProcess
  readonly match: RegExpExecArray
  /** The last 64 KiB the process printed (stdout and stderr). */
  readonly output: () => string
  /** The first match of `pattern` in what the process prints from now on. */
  readonly next: (pattern: RegExp, timeoutMs: number) => Promise<RegExpExecArray>
}

interface Waiter {
  text: string
  readonly pattern: RegExp
  readonly resolve: (m: RegExpExecArray) => void
}

/** Spawns `node <args>` and resolves once its output matches `ready`; output keeps being drained. */
export const startNode = (
  label: string,
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  ready: RegExp,
  readyTimeoutMs = 60_000
): Promise<Started> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...args], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.add(child)
    let out = ""
    let done = false
    const waiters = new Set<Waiter>()
    const next = (pattern: RegExp, timeoutMs: number) =>
      new Promise<RegExpExecArray>((resolveNext, rejectNext) => {
        const timer = setTimeout(() => {
          waiters.delete(waiter)
          rejectNext(new Error(`${label} printed nothing matching ${pattern} within ${timeoutMs} ms`))
        }, timeoutMs)
        const waiter: Waiter = {
          text: "",
          pattern,
          resolve: (m) => {
            clearTimeout(timer)
            resolveNext(m)
          }
        }
        waiters.add(waiter)
      })
    const timer = setTimeout(() => {
      if (done) return
      done = true
      reject(new Error(`${label} printed no ready line within ${readyTimeoutMs / 1000} s:\n${out}`))
    }, readyTimeoutMs)
    const onData = (d: Buffer) => {
      const text = d.toString()
      out = (out + text).slice(-65_536)
      for (const waiter of waiters) {
        waiter.text += text
        const m = waiter.pattern.exec(waiter.text)
        if (m !== null) {
          waiters.delete(waiter)
          waiter.resolve(m)
        }
      }
      if (done) return
      const match = ready.exec(out)
      if (match) {
        done = true
        clearTimeout(timer)
        resolve({ child, match, output: () => out, next })
      }
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    child.once("exit", (code, signal) => {
      children.delete(child)
      if (!done) {
        done = true
        clearTimeout(timer)
        reject(new Error(`${label} exited (${code ?? signal}) before it was ready:\n${out}`))
      } else if (!state.stopping && !expectedExits.has(child)) {
        state.childDied = true
        console.error(`\n${label} exited unexpectedly (${code ?? signal}):\n${out.slice(-4000)}`)
      }
    })
  })

export const stopChild = (child: ChildProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<void> =>
  new Promise((resolve) => {
    expectedExits.add(child)
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const kill = setTimeout(() => child.kill("SIGKILL"), 5_000)
    child.once("exit", () => {
      clearTimeout(kill)
      resolve()
    })
    child.kill(signal)
  })
