/**
 * The journal of result handler answers (migration 0017_result_deliveries):
 * one row per Svc-Request-Id that a handler acknowledged with a valid answer.
 * Read before a dispatch, so one logical artifact is delivered once.
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { HandlerAnswer } from "../../domain/ResultHandler.ts"

export interface Delivery {
  readonly requestId: string
  readonly runId: string
  readonly organizationId: string
  readonly workspaceId: string
  readonly resultHandlerId: string
  readonly purpose: string
  readonly answer: HandlerAnswer
  readonly createdAt: string
}

const decodeRows = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ answer: HandlerAnswer })))

export class ResultDeliveryRepo extends Context.Service<ResultDeliveryRepo, {
  /** The answer kept for `requestId` in the owner's workspace. */
  readonly find: (
    requestId: string,
    organizationId: string,
    workspaceId: string
  ) => Effect.Effect<Option.Option<HandlerAnswer>>
  /** Keeps an answer; a request id already kept keeps its first answer. */
  readonly save: (delivery: Delivery) => Effect.Effect<void>
}>()("svc/ResultDeliveryRepo") {
  static readonly layer = Layer.effect(ResultDeliveryRepo)(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      return {
        find: Effect.fn("ResultDeliveryRepo.find")(
          function*(requestId: string, organizationId: string, workspaceId: string) {
            const rows = yield* sql`SELECT answer FROM result_deliveries WHERE request_id = ${requestId}
            AND organization_id = ${organizationId} AND workspace_id = ${workspaceId}`.pipe(
              Effect.flatMap(decodeRows),
              Effect.orDie
            )
            return Option.map(Option.fromNullishOr(rows[0]), (row) => row.answer)
          }
        ),
        save: Effect.fn("ResultDeliveryRepo.save")(function*(d: Delivery) {
          yield* sql`INSERT INTO result_deliveries
              (request_id, run_id, organization_id, workspace_id, result_handler_id, purpose, answer, created_at)
            VALUES (${d.requestId}, ${d.runId}, ${d.organizationId}, ${d.workspaceId}, ${d.resultHandlerId}, ${d.purpose},
              ${sql.json(d.answer)}, ${d.createdAt})
            ON CONFLICT (request_id) DO NOTHING`.pipe(Effect.orDie)
        })
      }
    })
  )
}
