/**
 * Contract of runs (4.3) and the run routes of threads (4.2), with what the
 * reference page says of each. Streams are `text/event-stream` responses.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { ClientId, FollowupId, RunId, ThreadId } from "../domain/Ids.ts"
import { Page, PageQuery } from "../domain/Page.ts"
import { MessageInput, Run, RunReceipt, RunStartInput, RunStatus } from "../domain/Run.ts"
import { InstantFromString } from "../domain/Timestamp.ts"
import { doc, docWithBody, ExampleIds } from "./ApiDocs.ts"
import { ApiConflict, ApiForbidden, ApiNotFound, ApiPayloadTooLarge, ApiServiceUnavailable } from "./ErrorEnvelope.ts"
import { IdempotencyHeaders } from "./Headers.ts"

const threadParams = { id: ClientId.thread }
const params = { id: ClientId.run }

const streamNote =
  "Server-Sent Events in the AI SDK UI message stream protocol (v1): each frame has an `id:` (1, 2, 3, ...) " +
  "and a chunk as `data:`; the stream ends with `data: [DONE]`. Resume a broken stream with `GET /v1/runs/{id}/stream` and `Last-Event-ID`."

/** The answer of `POST /v1/threads/:id/cancel`. */
export const ThreadCancel = Schema.Struct({
  id: ThreadId,
  object: Schema.Literal("thread.cancel"),
  cancelledRunId: Schema.NullOr(RunId)
})

const runOptions = {
  streamProgress: true,
  maxSteps: 20,
  outputSchema: { type: "object", properties: { summary: { type: "string" } }, required: ["summary"] },
  metadata: { ticket: "T-1042" }
}

export const RunsApi = HttpApiGroup.make("runs")
  .add(
    HttpApiEndpoint.post("message", "/v1/threads/:id/messages", {
      params: threadParams,
      payload: MessageInput,
      headers: { ...IdempotencyHeaders, accept: Schema.optionalKey(Schema.String) },
      // With `Accept: application/json`: the receipt. Otherwise the run's UI message stream (SSE).
      success: RunReceipt,
      error: [ApiForbidden, ApiNotFound, ApiConflict, ApiPayloadTooLarge, ApiServiceUnavailable]
    }).annotateMerge(
      docWithBody(
        "Send a message: start a run and stream it",
        "Starts a run of the thread's agent on this message and answers with the run as it happens. " + streamNote +
          " The run's id is in the `Svc-Run-Id` header. With `Accept: application/json` the answer is the run's receipt instead. " +
          "While another run holds the thread the answer is 409 `thread_busy`; a plain-text message is then held and delivered " +
          "at that run's next turn boundary (`details.queued: true`), or answers the run's one pending approval or question.",
        MessageInput,
        { input: "Summarize yesterday's open tickets.", ...runOptions }
      )
    )
  )
  .add(
    HttpApiEndpoint.post("cancelThread", "/v1/threads/:id/cancel", {
      headers: IdempotencyHeaders,
      params: threadParams,
      success: ThreadCancel,
      error: [ApiForbidden, ApiNotFound, ApiConflict, ApiServiceUnavailable]
    }).annotateMerge(
      doc(
        "Cancel the thread's active run",
        "Cancels whichever run holds the thread; `cancelledRunId` is `null` when none did."
      )
    )
  )
  .add(
    HttpApiEndpoint.post("start", "/v1/runs", {
      payload: RunStartInput,
      headers: IdempotencyHeaders,
      success: RunReceipt,
      error: [ApiForbidden, ApiNotFound, ApiConflict, ApiPayloadTooLarge, ApiServiceUnavailable]
    }).annotateMerge(
      docWithBody(
        "Start a run",
        "Starts a run on `threadId` with the same options as sending a message, and answers at once with its receipt. " +
          "Follow it with `GET /v1/runs/{id}/stream`, or read it with `GET /v1/runs/{id}`. " +
          "`Idempotency-Key` (header, or `idempotencyKey` in the body) makes a retry return the first receipt.",
        RunStartInput,
        {
          threadId: ExampleIds.thread,
          input: { text: "Summarize yesterday's open tickets." },
          budgetCents: 50,
          ...runOptions
        }
      )
    )
  )
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
    }).annotateMerge(
      doc(
        "List runs",
        "The workspace's runs, newest first, a page at a time; narrow by `agentId`, `threadId`, `status` " +
          "or `createdSince` (an ISO 8601 instant or date)."
      )
    )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/runs/:id", { params, success: Run, error: [ApiForbidden, ApiNotFound] })
      .annotateMerge(
        doc(
          "Get a run",
          "The run's status and terminal reason, its usage (tokens, cost, steps), its error when it failed, " +
            "the configuration it captured at start, and the messages held for it (`queuedFollowups`)."
        )
      )
  )
  .add(
    HttpApiEndpoint.get("stream", "/v1/runs/:id/stream", {
      params,
      headers: { "last-event-id": Schema.optionalKey(Schema.String) },
      // The run's UI message stream (SSE); this schema only documents the JSON errors.
      success: HttpApiSchema.NoContent,
      error: [ApiForbidden, ApiNotFound]
    }).annotateMerge(
      doc(
        "Replay and follow a run's stream",
        "The run's stream from its first frame, or from after `Last-Event-ID`; a run still going is followed live until it ends or parks. " +
          "Any node serves any run, finished runs included, until the stream's retention ends. " + streamNote
      )
    )
  )
  .add(
    HttpApiEndpoint.get("workerStream", "/v1/runs/:id/workers/:workerRef/stream", {
      params: { id: ClientId.run, workerRef: ClientId.worker },
      headers: { "last-event-id": Schema.optionalKey(Schema.String) },
      // A worker's transcript (SSE), live and replayable like a run's; this schema only documents the JSON errors.
      success: HttpApiSchema.NoContent,
      error: [ApiForbidden, ApiNotFound, ApiConflict]
    }).annotateMerge(
      doc(
        "Follow a worker's stream",
        "The transcript of a task the run delegated (`workerRef` from the run's `data-svc-task` chunks): from its first frame, " +
          "or from after `Last-Event-ID`; followed live while the worker runs, replayed once it ended, until the stream's retention ends. " +
          "It opens with `data-svc-worker-meta` and ends like a run's stream. 404 `worker_not_found` for a reference that is not a " +
          "worker of this run, while it runs or after; 409 `run_not_active` in the moment between the run's end and its worker's " +
          "(the run's end stops its workers): retry, and it replays. Server-Sent Events as a run's stream (frame ids, `[DONE]`); " +
          "resume a broken one with this route and `Last-Event-ID`."
      )
    )
  )
  .add(
    HttpApiEndpoint.post("cancel", "/v1/runs/:id/cancel", {
      headers: IdempotencyHeaders,
      params,
      success: Run,
      error: [ApiForbidden, ApiNotFound, ApiConflict, ApiServiceUnavailable]
    })
      .annotateMerge(
        doc(
          "Cancel a run",
          "Stops the run (its tool calls are interrupted, its pending interactions cancelled), frees its thread and answers the run. " +
            "Cancelling a finished run changes nothing and answers its final state."
        )
      )
  )
  .add(
    HttpApiEndpoint.delete("withdrawFollowup", "/v1/runs/:id/followups/:followupId", {
      params: { id: ClientId.run, followupId: ClientId.followup },
      success: Schema.Struct({ id: FollowupId, object: Schema.Literal("run.followup"), deleted: Schema.Literal(true) }),
      error: [ApiForbidden, ApiNotFound]
    }).annotateMerge(
      doc(
        "Withdraw a held message",
        "Withdraws a message held for the run's next turn boundary. Once the run has claimed it for delivery, or it is gone, " +
          "the answer is 404 `followup_not_found`."
      )
    )
  )
  .annotate(
    OpenApi.Description,
    "Runs: one turn of an agent on a thread, started by a message, streamed as it happens, and readable afterwards."
  )
