/**
 * The runners connected to environments and the calls runs send them, in
 * PostgreSQL (migration 0031_environments), so that a runner polling any node
 * serves a run on any other. Every change that someone may be waiting for is
 * announced (EnvironmentSignals: NOTIFY, or in memory when embedded): `call:<envId>` when a
 * call is queued, `done:<callId>` when one is answered.
 *
 * A runner's times (connected, heard of, due to poll again, a call claimed) are the service's
 * Clock, sent to the SQL as parameters, not the database's now(): its liveness is judged at the
 * time of the node that asks, which TestClock drives in tests. A row written by one node is
 * judged by another, so the nodes' clocks must agree (NTP) to well within `repollSeconds`: a
 * node d seconds ahead takes runners for gone d seconds early. A call's `created_at` is the
 * database's: only the queue's order and the answered calls' day of retention read it.
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Option, Schema } from "effect"
import type { EnvironmentRunner } from "../../domain/Environment.ts"
import { nowIso } from "../Time.ts"
import { EnvironmentSignals } from "./EnvironmentSignals.ts"

/** A runner not heard of for this long is gone (it polls at least every `pollWindowMs`). */
export const runnerStaleSeconds = 45

/** A runner handed a call polls again at once; not within this, it is gone (migration 0033). */
export const repollSeconds = 5

/**
 * The condition of a live runner (`environment_runners` row) at `now` (ISO, the service's Clock): heard of
 * lately, and not late for its next poll.
 */
export const alive = (sql: PgClient.PgClient, now: string, table = "environment_runners") =>
  sql`(${sql(table)}.last_heartbeat_at > ${now}::timestamptz - make_interval(secs => ${runnerStaleSeconds})
    AND (${sql(table)}.repoll_by IS NULL OR ${sql(table)}.repoll_by > ${now}::timestamptz))`

const RunnerRow = Schema.Struct({
  host_name: Schema.String,
  version: Schema.String,
  connected_at: Schema.String,
  last_heartbeat_at: Schema.String
})
const CallRow = Schema.Struct({ id: Schema.String, tool: Schema.String, input: Schema.Unknown })
const StateRow = Schema.Struct({ state: Schema.String, result: Schema.NullOr(Schema.Unknown) })
const IdRow = Schema.Struct({ id: Schema.String })

export interface Claimed {
  readonly id: string
  readonly tool: string
  readonly input: unknown
}

export type CallState =
  | { readonly state: "pending" | "claimed" }
  | { readonly state: "done"; readonly result: unknown }
  | { readonly state: "gone" }

export class EnvironmentRepo extends Context.Service<EnvironmentRepo, {
  /** Records that runner `id` of `environmentId` (connected with the token of `tokenHash`) is alive; true when new. */
  readonly heartbeat: (runner: {
    readonly id: string
    readonly environmentId: string
    readonly tokenHash: string
    readonly hostName: string
    readonly version: string
  }) => Effect.Effect<boolean>
  /** The environment whose current token has this SHA-256. */
  readonly environmentOfToken: (tokenHash: string) => Effect.Effect<Option.Option<string>>
  readonly runners: (environmentId: string) => Effect.Effect<ReadonlyArray<EnvironmentRunner>>
  /**
   * Removes a runner: its claimed calls that may run again (reads) are queued again, the others
   * are answered `{ lost: true }` (their outcome is unknown); announced.
   */
  readonly dropRunner: (runnerId: string, environmentId: string) => Effect.Effect<void>
  /** Drops the runners of `environmentId` not heard of for `runnerStaleSeconds`, or not holding `tokenHash`. */
  readonly dropStale: (environmentId: string, tokenHash?: string) => Effect.Effect<void>
  /** Queues a call; a call of this id already there (a replay) is left as it is. */
  readonly insertCall: (call: {
    readonly id: string
    readonly environmentId: string
    readonly tool: string
    readonly input: unknown
    readonly retryable: boolean
  }) => Effect.Effect<void>
  /** Takes the oldest queued call of the environment for the runner, if any. */
  readonly claim: (environmentId: string, runnerId: string) => Effect.Effect<Option.Option<Claimed>>
  /** The runner's answer, kept only if the call is still the runner's (not given up, not re-queued). */
  readonly complete: (
    callId: string,
    runnerId: string,
    environmentId: string,
    result: unknown
  ) => Effect.Effect<boolean>
  readonly callState: (callId: string) => Effect.Effect<CallState>
  /** Withdraws a call no runner has taken: true when it was still waiting (it will never run). */
  readonly withdraw: (callId: string) => Effect.Effect<boolean>
}>()("svc/EnvironmentRepo") {
  static readonly layer = Layer.effect(EnvironmentRepo)(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const { announce } = yield* EnvironmentSignals
      const decode = <S extends Schema.Top>(schema: S) => Schema.decodeUnknownEffect(Schema.Array(schema))
      /** The `thread.workspace.status` of the environment's agents' threads: active while a runner is connected. */
      const markThreads = (environmentId: string) =>
        Effect.flatMap(
          nowIso,
          (now) =>
            sql`WITH live AS (SELECT EXISTS (SELECT 1 FROM environment_runners WHERE environment_id = ${environmentId}
              AND ${alive(sql, now)}) AS up)
            UPDATE threads t SET workspace = jsonb_build_object(
                'status', CASE WHEN live.up THEN 'active' ELSE 'unavailable' END, 'updatedAt', ${now}::text)
            FROM agents a, live
            WHERE t.agent_id = a.id AND t.workspace IS NOT NULL AND a.config->'workspace'->>'type' = 'remote'
              AND a.config->'workspace'->>'environmentId' = ${environmentId}
              AND t.workspace->>'status' IS DISTINCT FROM CASE WHEN live.up THEN 'active' ELSE 'unavailable' END`
        )
          .pipe(Effect.asVoid, Effect.orDie)
      /** Only a runner of `environmentId`: a poll with another environment's token cannot drop it. */
      const dropRunner = Effect.fn("EnvironmentRepo.dropRunner")(function*(runnerId: string, environmentId: string) {
        const mine = yield* sql`SELECT id FROM environment_runners WHERE id = ${runnerId}
            AND environment_id = ${environmentId}`.pipe(Effect.flatMap(decode(IdRow)), Effect.orDie)
        if (mine.length === 0) return
        const requeued = yield* sql`UPDATE environment_calls SET state = 'pending', runner_id = NULL, claimed_at = NULL
            WHERE runner_id = ${runnerId} AND state = 'claimed' AND retryable AND attempts < 3
            RETURNING environment_id AS id`.pipe(Effect.flatMap(decode(IdRow)), Effect.orDie)
        const lost = yield* sql`UPDATE environment_calls SET state = 'done', result = ${sql.json({ lost: true })}
            WHERE runner_id = ${runnerId} AND state = 'claimed' RETURNING id`.pipe(
          Effect.flatMap(decode(IdRow)),
          Effect.orDie
        )
        const gone = yield* sql`DELETE FROM environment_runners WHERE id = ${runnerId} RETURNING environment_id AS id`
          .pipe(Effect.flatMap(decode(IdRow)), Effect.orDie)
        for (const env of new Set(requeued.map((r) => r.id))) yield* announce(`call:${env}`)
        for (const call of lost) yield* announce(`done:${call.id}`)
        // Apart from the calls: a running run may hold its thread's row, and waits for the announcements above.
        yield* Effect.forkDetach(Effect.forEach(gone, (r) => markThreads(r.id), { discard: true }))
      })
      return {
        heartbeat: Effect.fn("EnvironmentRepo.heartbeat")(function*(r) {
          const now = yield* nowIso
          const rows = yield* sql`INSERT INTO environment_runners
                (id, environment_id, token_hash, host_name, version, connected_at, last_heartbeat_at)
              VALUES (${r.id}, ${r.environmentId}, ${r.tokenHash}, ${r.hostName}, ${r.version}, ${now}, ${now})
              ON CONFLICT (id) DO UPDATE SET last_heartbeat_at = EXCLUDED.last_heartbeat_at, repoll_by = NULL,
                host_name = EXCLUDED.host_name, version = EXCLUDED.version
              WHERE environment_runners.environment_id = EXCLUDED.environment_id
                AND environment_runners.token_hash = EXCLUDED.token_hash
              RETURNING (xmax = 0) AS fresh`.pipe(
            Effect.flatMap(decode(Schema.Struct({ fresh: Schema.Boolean }))),
            Effect.orDie
          )
          const fresh = rows[0]?.fresh === true
          if (fresh) yield* Effect.forkDetach(markThreads(r.environmentId))
          return fresh
        }),
        environmentOfToken: Effect.fn("EnvironmentRepo.environmentOfToken")(function*(tokenHash: string) {
          const rows = yield* sql`SELECT id FROM environments WHERE config->>'tokenHash' = ${tokenHash}`.pipe(
            Effect.flatMap(decode(IdRow)),
            Effect.orDie
          )
          return Option.map(Option.fromNullishOr(rows[0]), (r) => r.id)
        }),
        runners: Effect.fn("EnvironmentRepo.runners")(function*(environmentId: string) {
          const now = yield* nowIso
          const rows = yield* sql`SELECT host_name, version,
                to_char(connected_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS connected_at,
                to_char(last_heartbeat_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS last_heartbeat_at
              FROM environment_runners WHERE environment_id = ${environmentId}
                AND ${alive(sql, now)}
              ORDER BY connected_at, id`.pipe(Effect.flatMap(decode(RunnerRow)), Effect.orDie)
          return rows.map((r) => ({
            hostName: r.host_name,
            version: r.version,
            connectedAt: r.connected_at,
            lastHeartbeatAt: r.last_heartbeat_at
          }))
        }),
        dropRunner,
        dropStale: Effect.fn("EnvironmentRepo.dropStale")(function*(environmentId: string, tokenHash?: string) {
          const now = yield* nowIso
          const stale = yield* sql`SELECT id FROM environment_runners WHERE environment_id = ${environmentId}
              AND (NOT ${alive(sql, now)}
                OR (${tokenHash ?? null}::text IS NOT NULL AND token_hash <> ${tokenHash ?? null}::text))`.pipe(
            Effect.flatMap(decode(IdRow)),
            Effect.orDie
          )
          yield* Effect.forEach(stale, (r) => dropRunner(r.id, environmentId), { discard: true })
          // A rotation: the polls still waiting with the old token end (RunnerLink).
          if (tokenHash !== undefined) yield* announce(`token:${environmentId}`)
        }),
        insertCall: Effect.fn("EnvironmentRepo.insertCall")(function*(c) {
          // Answered calls are kept a day (a run replayed after its node died finds its answers), then dropped.
          yield* sql`DELETE FROM environment_calls WHERE environment_id = ${c.environmentId} AND state = 'done'
              AND created_at < now() - interval '1 day'`.pipe(Effect.orDie)
          yield* sql`INSERT INTO environment_calls (id, environment_id, tool, input, retryable, state)
              VALUES (${c.id}, ${c.environmentId}, ${c.tool}, ${sql.json(c.input)}, ${c.retryable}, 'pending')
              ON CONFLICT (id) DO NOTHING`.pipe(Effect.orDie)
          yield* announce(`call:${c.environmentId}`)
        }),
        claim: Effect.fn("EnvironmentRepo.claim")(function*(environmentId: string, runnerId: string) {
          const now = yield* nowIso
          const rows = yield* sql`UPDATE environment_calls SET state = 'claimed', runner_id = ${runnerId},
                attempts = attempts + 1, claimed_at = ${now}
              WHERE id = (SELECT id FROM environment_calls WHERE environment_id = ${environmentId} AND state = 'pending'
                ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
              RETURNING id, tool, input`.pipe(Effect.flatMap(decode(CallRow)), Effect.orDie)
          const claimed = Option.fromNullishOr(rows[0])
          if (Option.isSome(claimed)) {
            yield* sql`UPDATE environment_runners SET repoll_by = ${now}::timestamptz + make_interval(secs => ${repollSeconds})
                WHERE id = ${runnerId}`.pipe(Effect.orDie)
            yield* announce(`taken:${claimed.value.id}`)
          }
          return claimed
        }),
        complete: Effect.fn("EnvironmentRepo.complete")(
          function*(callId: string, runnerId: string, environmentId: string, result: unknown) {
            // Kept as its JSON text (a jsonb string): jsonb would reorder the output's keys.
            const rows = yield* sql`UPDATE environment_calls SET state = 'done', result = ${
              sql.json(JSON.stringify(result))
            }
              WHERE id = ${callId} AND runner_id = ${runnerId} AND environment_id = ${environmentId}
                AND state = 'claimed' RETURNING id`.pipe(
              Effect.flatMap(decode(IdRow)),
              Effect.orDie
            )
            if (rows.length > 0) yield* announce(`done:${callId}`)
            return rows.length > 0
          }
        ),
        callState: Effect.fn("EnvironmentRepo.callState")(function*(callId: string) {
          const rows = yield* sql`SELECT state, result FROM environment_calls WHERE id = ${callId}`.pipe(
            Effect.flatMap(decode(StateRow)),
            Effect.orDie
          )
          const row = rows[0]
          if (row === undefined) return { state: "gone" } as const
          return row.state === "done"
            ? { state: "done", result: row.result } as const
            : { state: row.state === "claimed" ? "claimed" : "pending" } as const
        }),
        withdraw: Effect.fn("EnvironmentRepo.withdraw")(function*(callId: string) {
          const rows = yield* sql`DELETE FROM environment_calls WHERE id = ${callId} AND state = 'pending' RETURNING id`
            .pipe(Effect.flatMap(decode(IdRow)), Effect.orDie)
          return rows.length > 0
        })
      }
    })
  )
}
