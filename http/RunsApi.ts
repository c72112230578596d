/** Contract of runs (4.3) and the run routes of threads (4.2). Streams are `text/event-stream` responses. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { ClientId, FollowupId, RunId, ThreadId } from "../domain/Ids.ts"
import { Page, PageQuery } from "../domain/Page.ts"
import { InstantFromString } from "../domain/Timestamp.ts"
import { MessageInput, Run, RunReceipt, RunStartInput, RunStatus } from "../domain/Run.ts"
import { IdempotencyHeaders } from "./Headers.ts"

const threadParams = { id: ClientId.thread }
const params = { id: ClientId.run }

export const RunsApi = HttpApiGroup.make("runs")
  .add(
    HttpApiEndpoint.post("message", "/v1/threads/:id/messages", {
      params: threadParams,
      payload: MessageInput,
      headers: { ...IdempotencyHeaders, accept: Schema.optionalKey(Schema.String) },
      // With `Accept: application/json`: the receipt. Otherwise the run's UI message stream (SSE).
      success: RunReceipt
    })
  )
  .add(
    HttpApiEndpoint.get("warm", "/v1/threads/:id/messages", {
      params: threadParams,
      query: { warm: Schema.Literal("1") },
      success: HttpApiSchema.NoContent
    })
  )
  .add(
    HttpApiEndpoint.post("cancelThread", "/v1/threads/:id/cancel", {
      params: threadParams,
      success: Schema.Struct({
        id: ThreadId,
        object: Schema.Literal("thread.cancel"),
        cancelledRunId: Schema.NullOr(RunId)
      })
    })
  )
  .add(HttpApiEndpoint.post("start", "/v1/runs", { payload: RunStartInput, headers: IdempotencyHeaders, success: RunReceipt }))
  .add(
    HttpApiEndpoint.get("list", "/v1/runs", {
      query: {
        ...PageQuery,
        agentId: Schema.optionalKey(ClientId.agent),
        threadId: Schema.optionalKey(ClientId.thread),
        status: Schema.optionalKey(RunStatus),
        createdSince: Schema.optionalKey(InstantFromString)
      },
      success: Page(Run)
    })
  )
  .add(HttpApiEndpoint.get("get", "/v1/runs/:id", { params, success: Run }))
  .add(
    HttpApiEndpoint.get("stream", "/v1/runs/:id/stream", {
      params,
      headers: { "last-event-id": Schema.optionalKey(Schema.String) },
      // The run's UI message stream (SSE); this schema only documents the JSON errors.
      success: HttpApiSchema.NoContent
    })
  )
  .add(
    HttpApiEndpoint.get("workerStream", "/v1/runs/:id/workers/:workerRef/stream", {
      params: { id: ClientId.run, workerRef: ClientId.worker },
      headers: { "last-event-id": Schema.optionalKey(Schema.String) },
      // A worker's transcript (SSE), live and replayable like a run's; this schema only documents the JSON errors.
      success: HttpApiSchema.NoContent
    })
  )
  .add(HttpApiEndpoint.post("cancel", "/v1/runs/:id/cancel", { params, success: Run }))
  .add(
    HttpApiEndpoint.delete("withdrawFollowup", "/v1/runs/:id/followups/:followupId", {
      params: { id: ClientId.run, followupId: ClientId.followup },
      success: Schema.Struct({ id: FollowupId, object: Schema.Literal("run.followup"), deleted: Schema.Literal(true) })
    })
  )
