/**
 * SQL of code hosting beyond the connection rows themselves (ResourceStore):
 * authorization states (single use), connections by installation (webhooks),
 * the write journal (write replay) and thread-owned branches.
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { CodehostConnectionId } from "../../domain/Ids.ts"

export interface ClaimedState {
  readonly connectionId: CodehostConnectionId
  readonly expiresAt: string
}

/** One journaled write: `dispatched` until settled `completed` (its result) or `failed` (its stable error). */
export interface WriteRecord {
  readonly status: "dispatched" | "completed" | "failed"
  readonly outcome: unknown
}

const StateRow = Schema.Struct({ connection_id: CodehostConnectionId, expires_at: Schema.String })
const WriteRow = Schema.Struct({
  status: Schema.Literals(["dispatched", "completed", "failed"]),
  outcome: Schema.Unknown
})
const BranchRow = Schema.Struct({ thread_id: Schema.String, last_pushed_sha: Schema.NullOr(Schema.String) })
const ConnectionIds = Schema.Array(Schema.Struct({ id: CodehostConnectionId }))

export class CodehostRepo extends Context.Service<CodehostRepo, {
  /** A new state for the connection; earlier unused ones are withdrawn (one live URL per connection). */
  readonly insertState: (nonce: string, connectionId: string, expiresAt: string, now: string) => Effect.Effect<void>
  /** Marks the state used when it is unused and unexpired: exactly one caller gets it. */
  readonly claimState: (nonce: string, now: string) => Effect.Effect<Option.Option<ClaimedState>>
  /** Ids of the connections bound to an installation, in every workspace (webhooks carry no workspace). */
  readonly byInstallation: (installationId: number) => Effect.Effect<ReadonlyArray<CodehostConnectionId>>
  /** Journals a write before dispatch; the existing record when the call was journaled before. */
  readonly journal: (
    runId: string,
    toolCallId: string,
    toolName: string,
    now: string
  ) => Effect.Effect<Option.Option<WriteRecord>>
  readonly settle: (
    runId: string,
    toolCallId: string,
    status: "completed" | "failed",
    outcome: unknown,
    now: string
  ) => Effect.Effect<void>
  /** The thread owning a branch, with its last pushed SHA. */
  readonly branchOwner: (
    repository: string,
    branch: string
  ) => Effect.Effect<Option.Option<{ readonly threadId: string; readonly lastPushedSha: string | null }>>
  /** Claims the branch for the thread (no-op when it owns it); false when another thread owns it. */
  readonly claimBranch: (repository: string, branch: string, threadId: string, now: string) => Effect.Effect<boolean>
  readonly recordPush: (repository: string, branch: string, sha: string, now: string) => Effect.Effect<void>
}>()("svc/CodehostRepo") {
  static readonly layer = Layer.effect(CodehostRepo)(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const decode = <S extends Schema.Top>(schema: S) => Schema.decodeUnknownEffect(Schema.Array(schema))
      return {
        insertState: Effect.fn("CodehostRepo.insertState")(
          function*(nonce: string, connectionId: string, expiresAt: string, now: string) {
            yield* sql`DELETE FROM codehost_states WHERE connection_id = ${connectionId}`.pipe(Effect.orDie)
            yield* sql`INSERT INTO codehost_states (nonce, connection_id, expires_at, created_at)
            VALUES (${nonce}, ${connectionId}, ${expiresAt}, ${now})`.pipe(Effect.orDie)
          }
        ),
        claimState: Effect.fn("CodehostRepo.claimState")(function*(nonce: string, now: string) {
          const rows = yield* sql`UPDATE codehost_states SET used_at = ${now}
            WHERE nonce = ${nonce} AND used_at IS NULL AND expires_at > ${now}
            RETURNING connection_id, expires_at`.pipe(Effect.flatMap(decode(StateRow)), Effect.orDie)
          return Option.map(
            Option.fromNullishOr(rows[0]),
            (r) => ({ connectionId: r.connection_id, expiresAt: r.expires_at })
          )
        }),
        byInstallation: Effect.fn("CodehostRepo.byInstallation")(function*(installationId: number) {
          const rows = yield* sql`SELECT id FROM codehost_connections WHERE config->>'installationId' = ${
            String(installationId)
          } ORDER BY id`
            .pipe(Effect.flatMap(Schema.decodeUnknownEffect(ConnectionIds)), Effect.orDie)
          return rows.map((r) => r.id)
        }),
        journal: Effect.fn("CodehostRepo.journal")(
          function*(runId: string, toolCallId: string, toolName: string, now: string) {
            const inserted =
              yield* sql`INSERT INTO codehost_writes (run_id, tool_call_id, tool_name, status, created_at)
            VALUES (${runId}, ${toolCallId}, ${toolName}, 'dispatched', ${now}) ON CONFLICT DO NOTHING RETURNING run_id`
                .pipe(Effect.orDie)
            if (inserted.length > 0) return Option.none<WriteRecord>()
            const rows =
              yield* sql`SELECT status, outcome FROM codehost_writes WHERE run_id = ${runId} AND tool_call_id = ${toolCallId}`
                .pipe(Effect.flatMap(decode(WriteRow)), Effect.orDie)
            return Option.fromNullishOr(rows[0])
          }
        ),
        settle: Effect.fn("CodehostRepo.settle")(
          function*(runId: string, toolCallId: string, status: "completed" | "failed", outcome: unknown, now: string) {
            yield* sql`UPDATE codehost_writes SET status = ${status}, outcome = ${
              sql.json(outcome)
            }, settled_at = ${now}
            WHERE run_id = ${runId} AND tool_call_id = ${toolCallId}`.pipe(Effect.orDie)
          }
        ),
        branchOwner: Effect.fn("CodehostRepo.branchOwner")(function*(repository: string, branch: string) {
          const rows = yield* sql`SELECT thread_id, last_pushed_sha FROM codehost_branches
            WHERE repository = ${repository.toLowerCase()} AND branch = ${branch}`.pipe(
            Effect.flatMap(decode(BranchRow)),
            Effect.orDie
          )
          return Option.map(
            Option.fromNullishOr(rows[0]),
            (r) => ({ threadId: r.thread_id, lastPushedSha: r.last_pushed_sha })
          )
        }),
        claimBranch: Effect.fn("CodehostRepo.claimBranch")(
          function*(repository: string, branch: string, threadId: string, now: string) {
            yield* sql`INSERT INTO codehost_branches (repository, branch, thread_id, updated_at)
            VALUES (${repository.toLowerCase()}, ${branch}, ${threadId}, ${now}) ON CONFLICT DO NOTHING`.pipe(
              Effect.orDie
            )
            const rows = yield* sql`SELECT thread_id, last_pushed_sha FROM codehost_branches
            WHERE repository = ${repository.toLowerCase()} AND branch = ${branch}`.pipe(
              Effect.flatMap(decode(BranchRow)),
              Effect.orDie
            )
            return rows[0]?.thread_id === threadId
          }
        ),
        recordPush: Effect.fn("CodehostRepo.recordPush")(
          function*(repository: string, branch: string, sha: string, now: string) {
            yield* sql`UPDATE codehost_branches SET last_pushed_sha = ${sha}, updated_at = ${now}
            WHERE repository = ${repository.toLowerCase()} AND branch = ${branch}`.pipe(Effect.orDie)
          }
        )
      }
    })
  )
}
