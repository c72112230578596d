/**
 * Closed-loop load: each client owns one thread (a thread holds one run at a
 * time) and sends its turns in sequence, the next as soon as the last ended.
 * Failed turns are collected with their body for the report.
 */
import { type Scenario, turn, type TurnResult } from "./Http.ts"
import { shouldStop } from "./Lifecycle.ts"

/** Failed turns so far, described (scenario, thread, turn, why); a script exits 1 when there are any. */
export const failures: Array<string> = []

export const reportFailures = () => {
  if (failures.length === 0) return
  console.log(`\n${failures.length} turn(s) FAILED; the first ${Math.min(5, failures.length)}:`)
  for (const f of failures.slice(0, 5)) console.log(`\n${f}`)
}

/** `perClient` turns on each thread, all threads at once; the results per thread, in order. */
export const runClients = (
  base: string,
  key: string,
  threads: ReadonlyArray<string>,
  perClient: number,
  scenario: Scenario
): Promise<Array<Array<TurnResult>>> =>
  Promise.all(threads.map(async (threadId) => {
    const results: Array<TurnResult> = []
    for (let i = 0; i < perClient && !shouldStop(); i++) {
      const r = await turn(base, key, threadId, scenario)
      if (!r.ok && r.error !== undefined) {
        failures.push(`[${scenario.name}, thread ${threadId}, turn ${i + 1}] ${r.error}`)
      }
      results.push(r)
    }
    return results
  }))

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
