/**
 * How a benchmark script ends: whatever happens (success, failure, Ctrl-C,
 * SIGTERM), its child processes are killed and the databases it created are
 * dropped. The first signal stops the children, so every pending step fails
 * fast and the script's own `finally` cleans up; a second signal (or 20 s)
 * cleans up and exits at once.
 */
import { adminQuery } from "./Postgres.ts"
import { children, state, stopChild } from "./Processes.ts"

const databases = new Set<string>()
let interrupted = false
let cleaning: Promise<void> | undefined

export const isInterrupted = () => interrupted

/** Whether the benchmark should stop sending work: interrupted, or a child it needs died. */
export const shouldStop = () => interrupted || state.childDied

/** Creates a database, dropped at cleanup (marked first: a signal during CREATE still drops it). */
export const createDatabase = async (name: string): Promise<void> => {
  databases.add(name)
  await adminQuery(`CREATE DATABASE ${name}`)
  if (interrupted) throw new Error("interrupted")
}

export const dropDatabase = async (name: string): Promise<void> => {
  try {
    await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    databases.delete(name)
  } catch (e) {
    console.error(`could not drop database ${name}: ${explain(e)}`)
  }
}

/** An error's message with its causes (fetch hides the reason in `cause`). */
export const explain = (e: unknown): string => {
  const parts: Array<string> = []
  for (let cur: unknown = e; cur !== undefined && cur !== null && parts.length < 4;) {
    parts.push(cur instanceof Error ? `${cur.name}: ${cur.message}` : String(cur))
    cur = cur instanceof Error ? cur.cause : undefined
  }
  return parts.join(" <- ")
}

/** Kills the child processes, then drops the databases; every caller awaits the same work. */
export const cleanup = (): Promise<void> => (cleaning ??= (async () => {
  state.stopping = true
  await Promise.all([...children].map((child) => stopChild(child)))
  for (const name of [...databases]) await dropDatabase(name)
})())

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (interrupted) {
      void cleanup().finally(() => process.exit(130))
      return
    }
    interrupted = true
    state.stopping = true
    console.error(`\n${signal}: stopping and cleaning up`)
    for (const child of children) void stopChild(child)
    setTimeout(() => void cleanup().finally(() => process.exit(130)), 20_000)
  })
}

/** Runs `main` (its exit code), then `after` (reports), then cleans up and exits. */
export const runBenchmark = async (
  main: () => Promise<number>,
  after: () => void = () => undefined
): Promise<never> => {
  let exitCode = 1
  try {
    exitCode = await main()
  } catch (e) {
    if (!interrupted) console.error(`\nbenchmark failed: ${explain(e)}`)
  } finally {
    after()
    await cleanup()
  }
  return process.exit(interrupted ? 130 : exitCode)
}
