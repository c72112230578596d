/**
 * Approvals remembered for a thread: a connection with approval 'once' asks
 * for each exact tool-and-input once; an approved pair is not reviewed again
 * on that thread.
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer } from "effect"
import type { ThreadId } from "../../domain/Ids.ts"
import { canonicalJson, sha256Hex } from "../CanonicalJson.ts"

const hashOf = (input: unknown) => sha256Hex(canonicalJson(input))

export class ApprovalMemory extends Context.Service<ApprovalMemory, {
  readonly has: (threadId: ThreadId, toolName: string, input: unknown) => Effect.Effect<boolean>
  readonly remember: (threadId: ThreadId, toolName: string, input: unknown, now: string) => Effect.Effect<void>
}>()("svc/ApprovalMemory") {
  static readonly layer = Layer.effect(ApprovalMemory)(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      return {
        has: Effect.fn("ApprovalMemory.has")(function*(threadId: ThreadId, toolName: string, input: unknown) {
          const rows =
            yield* sql`SELECT 1 FROM approval_memory WHERE thread_id = ${threadId} AND tool_name = ${toolName}
            AND input_hash = ${hashOf(input)}`.pipe(Effect.orDie)
          return rows.length > 0
        }),
        remember: Effect.fn("ApprovalMemory.remember")(
          function*(threadId: ThreadId, toolName: string, input: unknown, now: string) {
            yield* sql`INSERT INTO approval_memory (thread_id, tool_name, input_hash, created_at)
            VALUES (${threadId}, ${toolName}, ${hashOf(input)}, ${now}) ON CONFLICT DO NOTHING`.pipe(Effect.orDie)
          }
        )
      }
    })
  )
}
