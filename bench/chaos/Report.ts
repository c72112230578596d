/**
 * The chaos run's figures: what was started and how it ended, the kills, and
 * failover: for each run that was executing on a killed runner, the time from
 * the kill to the first chunk of it (written elsewhere) that its client
 * received, as p50 / p99 / max.
 */
import type { Verdict } from "./Assertions.ts"
import type { ChaosResult } from "./ChaosRun.ts"

export interface Failover {
  /** One figure per run executing on a killed runner (ms), ascending. */
  readonly samples: ReadonlyArray<number>
  /** The same with the kill (its order and runner) and the run, in kill order. */
  readonly details: ReadonlyArray<
    { readonly kill: number; readonly at: number; readonly runner: number; readonly runId: string; readonly ms: number }
  >
  /** Runs executing on a killed runner whose client never received a later chunk. */
  readonly missing: ReadonlyArray<string>
}

export const failover = (result: ChaosResult): Failover => {
  const byRun = new Map(result.sessions.map((s) => [s.runId, s.followed.frames]))
  const details: Array<Failover["details"][number]> = []
  const missing: Array<string> = []
  result.chaos.kills().forEach((kill, k) => {
    for (const orphan of kill.orphans) {
      const frames = byRun.get(orphan.runId)
      if (frames === undefined) continue
      const first = frames.find((f) => f.id > orphan.lastSeq)
      if (first === undefined) missing.push(orphan.runId)
      else {details.push({
          kill: k + 1,
          at: kill.at,
          runner: kill.runner,
          runId: orphan.runId,
          ms: Math.max(0, first.at - kill.at)
        })}
    }
  })
  return { samples: details.map((d) => d.ms).sort((a, b) => a - b), details, missing }
}

const quantile = (sorted: ReadonlyArray<number>, q: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]

export const figures = (samples: ReadonlyArray<number>) => ({
  n: samples.length,
  p50: quantile(samples, 0.5),
  p99: quantile(samples, 0.99),
  max: samples.at(-1) ?? Number.NaN
})

/**
 * The failover of a lone failure: kills with no other kill in the 10 s before (every other runner
 * is up again) nor the 5 s after (the runs' new runner is not killed under them).
 */
export const isolated = (result: ChaosResult, f: Failover): ReadonlyArray<number> => {
  const at = result.chaos.kills().map((k) => k.at)
  const alone = (t: number) => !at.some((other) => other !== t && other > t - 10_000 && other < t + 5_000)
  return f.details.filter((d) => alone(d.at)).map((d) => d.ms).sort((a, b) => a - b)
}

export const report = (result: ChaosResult, verdict: Verdict): string => {
  const lines: Array<string> = []
  const seconds = ((result.endedAt - result.startedAt) / 1000).toFixed(0)
  const byScenario = new Map<string, Map<string, number>>()
  for (const s of result.sessions) {
    const ends = byScenario.get(s.scenario) ?? new Map<string, number>()
    const end = `${s.status}${s.terminalReason === null ? "" : `/${s.terminalReason}`}`
    ends.set(end, (ends.get(end) ?? 0) + 1)
    byScenario.set(s.scenario, ends)
  }
  const kills = result.chaos.kills()
  const f = failover(result)
  const fig = figures(f.samples)
  const lone = figures(isolated(result, f))
  const reconnects = result.sessions.reduce((n, s) => n + s.followed.connections - 1, 0)
  lines.push(
    `chaos run: ${result.sessions.length} runs in ${seconds} s on ${result.options.runners} runners + 1 client node`
  )
  for (const [scenario, ends] of byScenario) {
    lines.push(`  ${scenario.padEnd(9)} ${[...ends].map(([e, n]) => `${n} ${e}`).join(", ")}`)
  }
  lines.push(
    `kills: ${kills.length} (SIGKILL, restarted after ${result.options.restartAfterMs} ms); runs executing on a killed runner: ${
      f.samples.length + f.missing.length
    }`
  )
  lines.push(
    `stream reconnects: ${reconnects}; tool calls: ${result.toolCalls.length}, executed again after a kill cut their step short: ${verdict.repeatedAfterChaos}`
  )
  lines.push(
    `failover (kill -> first chunk from another node): n=${fig.n} p50=${fig.p50} ms p99=${fig.p99} ms max=${fig.max} ms`
  )
  lines.push(
    `  lone kills (none 10 s before, none 5 s after): n=${lone.n} p50=${lone.p50} ms p99=${lone.p99} ms max=${lone.max} ms`
  )
  const slow = f.details.filter((d) => d.ms > 3_000).sort((a, b) => b.ms - a.ms)
  if (slow.length > 0) {
    lines.push(
      `  over 3 s: ${
        slow.map((d) =>
          `${d.ms} ms (kill ${d.kill} at ${new Date(d.at).toISOString().slice(11, 23)}, runner ${d.runner}, ${d.runId})`
        ).join("; ")
      }`
    )
  }
  if (f.missing.length > 0) lines.push(`  never resumed: ${f.missing.join(", ")}`)
  lines.push(
    verdict.violations.length === 0 ? "invariants: all hold" : `invariants: ${verdict.violations.length} violations`
  )
  for (const v of verdict.violations.slice(0, 50)) lines.push(`  - ${v}`)
  return lines.join("\n")
}
