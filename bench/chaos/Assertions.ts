/**
 * What a chaos run must show, whatever was killed: every started run reached
 * exactly one terminal state, the one its scenario leads to, and none is left
 * active; each run's stream, as its client followed it across reconnects, has
 * the ids 1..n (no gap, no duplicate), is the stream stored (replayed whole at
 * the end), ends once, and passes the `ai` package's validation; no tool call
 * ran twice unless a kill or a restart cut its step short in between; a
 * parked run resumed when approved and expired when not.
 */
import { Effect, Schema } from "effect"
import { query } from "../../test/support/TestDatabase.ts"
import { frames, parseWithAi } from "../../test/support/UiStream.ts"
import type { ChaosResult } from "./ChaosRun.ts"
import type { ChaosEvent } from "./Killer.ts"
import type { Session } from "./Load.ts"
import type { ToolCall } from "./ToolServer.ts"

export interface Verdict {
  readonly violations: ReadonlyArray<string>
  /** Tool calls executed again after a kill or restart cut their step short (allowed, counted). */
  readonly repeatedAfterChaos: number
}

const Chunk = Schema.Struct({
  type: Schema.String,
  finishReason: Schema.optional(Schema.String),
  data: Schema.optional(Schema.Unknown)
})
const decodeChunk = Schema.decodeUnknownOption(Schema.fromJsonString(Chunk))

const terminal = new Set(["completed", "failed", "cancelled"])

/** The status and terminal reason each scenario must end with. */
const expected = (s: Session): ReadonlyArray<readonly [string, string | null]> => {
  switch (s.scenario) {
    case "text":
    case "tools":
    case "followup":
    case "approve":
      return [["completed", null]]
    case "expire":
      return [["cancelled", "interaction_timeout"]]
    case "cancel":
      return [["cancelled", null]]
  }
}

/** The final end a status goes with. */
const endOf = (
  status: string
) => (status === "cancelled" ? "abort" : status === "failed" ? "finish:error" : "finish:stop")

const sseText = (fs: ReadonlyArray<{ readonly id: number; readonly data: string }>) =>
  fs.map((f) => `id: ${f.id}\ndata: ${f.data}\n\n`).join("") + "data: [DONE]\n\n"

/**
 * How long after a runner rejoins its shards may still be moving back to it (the other runners
 * release them within a lock refresh; a starved one takes up to the lock expiry of 3 s).
 */
const RejoinHandOffMs = 3_000

/**
 * How long after a kill the survivors may still be dealing out shards: the dead runner is taken out
 * of the cluster within 500 ms (src/cluster/DeadRunners.ts) and every runner reads the assignments
 * every 500 ms. The survivors exchange a few shards among themselves too (the cluster's hash ring
 * caps each runner's share), so a run that began on one of them right after the kill can be
 * handed to another and its step cut short.
 */
const KillSettleMs = 2_000

/**
 * When chaos can cut a step short: from a kill until its shards are dealt out; and from a restart's
 * launch until 3 s after the new process listens (its runner registers while the process starts,
 * and the others hand its shards back from then on, interrupting what they executed there).
 */
const windows = (events: ReadonlyArray<ChaosEvent>): ReadonlyArray<readonly [number, number]> =>
  events.flatMap((e): ReadonlyArray<readonly [number, number]> => {
    if (e.kind === "kill") return [[e.at, e.at + KillSettleMs]]
    if (e.kind === "rejoin") return []
    const rejoined = events.find((r) => r.kind === "rejoin" && r.runner === e.runner && r.at >= e.at)
    return [[e.at, (rejoined?.at ?? Number.POSITIVE_INFINITY) + RejoinHandOffMs]]
  })

/**
 * A tool call executed more than once is allowed only when a kill, a restart or a runner rejoining
 * (its shards handed back) came between two of its executions.
 */
const repeats = (calls: ReadonlyArray<ToolCall>, events: ReadonlyArray<ChaosEvent>) => {
  const byKey = new Map<string, Array<ToolCall>>()
  for (const c of calls) byKey.set(c.key, [...(byKey.get(c.key) ?? []), c])
  let justified = 0
  const unjustified: Array<string> = []
  const cut = windows(events)
  for (const [key, list] of byKey) {
    for (let i = 1; i < list.length; i++) {
      const before = list[i - 1].at
      const after = list[i].at
      // A window overlapping (before, after]: something between the two executions could cut the step short.
      if (cut.some(([from, to]) => from <= after && to > before - 50)) justified += 1
      else {unjustified.push(
          `tool call ${key} executed again ${
            after - before
          } ms later with no kill (or the shard moves of the 2 s after it), restart or rejoin between (run ${
            list[i].runId
          })`
        )}
    }
  }
  return { justified, unjustified, byKey }
}

const checkSession = (s: Session, replayed: string, calls: ReadonlyMap<string, ReadonlyArray<ToolCall>>) =>
  Effect.gen(function*() {
    const v: Array<string> = []
    const at = `${s.runId} (${s.scenario})`
    for (const e of s.errors) v.push(`${at}: ${e}`)
    if (!terminal.has(s.status)) v.push(`${at}: still ${s.status} at the end`)
    if (!expected(s).some(([status, reason]) => status === s.status && reason === s.terminalReason)) {
      v.push(
        `${at}: ended ${s.status}/${s.terminalReason}, expected ${
          expected(s).map(([a, b]) => `${a}/${b}`).join(" or ")
        }`
      )
    }
    const fs = s.followed.frames
    if (!s.followed.ended) {
      v.push(`${at}: its client never saw the final end (${fs.length} frames, ${s.followed.connections} connections)`)
    }
    const bad = fs.findIndex((f, i) => f.id !== i + 1)
    if (bad >= 0) {
      v.push(`${at}: frame ids not 1..n: at ${bad} got ${fs[bad].id} (ids ${fs.map((f) => f.id).join(",")})`)
    }
    const stored = frames(replayed).flatMap((f) => (f.id === undefined ? [] : [{ id: f.id, data: f.data }]))
    if (stored.length !== fs.length || stored.some((f, i) => f.id !== fs[i]?.id || f.data !== fs[i]?.data)) {
      v.push(
        `${at}: what its client received (${fs.length} frames) differs from the stored stream (${stored.length} frames)`
      )
    }
    const parsed = yield* Effect.result(parseWithAi(sseText(fs)))
    if (parsed._tag === "Failure") v.push(`${at}: the ai package rejects its stream: ${parsed.failure.message}`)
    const chunks = fs.flatMap((f) => {
      const c = decodeChunk(f.data)
      return c._tag === "Some" ? [c.value] : []
    })
    const terminals = chunks.filter((c) => c.type === "data-svc-terminal").length
    if (terminals !== 1) v.push(`${at}: ${terminals} data-svc-terminal chunks`)
    const finals = chunks.filter((c) => c.type === "abort" || (c.type === "finish" && c.finishReason !== "other"))
    const last = chunks.at(-1)
    const lastEnd = last === undefined
      ? "none"
      : last.type === "abort"
      ? "abort"
      : `${last.type}:${last.finishReason ?? ""}`
    if (finals.length !== 1 || lastEnd !== endOf(s.status)) {
      v.push(`${at}: ${finals.length} final ends, last chunk ${lastEnd}, status ${s.status}`)
    }
    if (s.scenario === "followup") {
      if (s.followupId === undefined) v.push(`${at}: the follow-up was not held`)
      else if (
        !fs.some((f) =>
          f.data.includes(`"followupId":"${s.followupId}"`) && f.data.includes("data-svc-followup-replayed")
        )
      ) {
        v.push(`${at}: follow-up ${s.followupId} was never replayed`)
      }
    }
    const executed = s.keys.map((k) => calls.get(k)?.length ?? 0)
    // A follow-up replaces the turn's script from the boundary it arrives at (the scripted model reads the last message).
    if (s.scenario !== "followup" && s.status === "completed" && executed.some((n) => n === 0)) {
      v.push(`${at}: completed without executing every tool call (${executed.join(",")})`)
    }
    if (s.scenario === "expire" && executed.some((n) => n > 0)) v.push(`${at}: its gated call ran without an approval`)
    return v
  })

export const assess = (result: ChaosResult): Effect.Effect<Verdict> =>
  Effect.gen(function*() {
    const violations: Array<string> = [...result.driverFailures.map((f) => `driver: ${f}`), ...result.chaos.failures()]
    const { justified, unjustified, byKey } = repeats(result.toolCalls, result.chaos.events())
    violations.push(...unjustified)
    for (const s of result.sessions) {
      const replayed = yield* result.api.send("GET", `/v1/runs/${s.runId}/stream`, undefined, {}, result.cluster.client)
        .pipe(
          Effect.map((r) => r.text),
          Effect.catchCause(() => Effect.succeed(""))
        )
      violations.push(...(yield* checkSession(s, replayed, byKey)))
    }
    const active = yield* query(
      result.cluster.databaseUrl,
      "SELECT id, status FROM runs WHERE status NOT IN ('completed', 'failed', 'cancelled')"
    ).pipe(
      Effect.catchCause(() => Effect.succeed([]))
    )
    for (const r of active) violations.push(`run ${String(r["id"])} stuck ${String(r["status"])}`)
    return { violations, repeatedAfterChaos: justified }
  })
