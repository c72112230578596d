/** Contract of the thread resource routes (spec 4.2), with what the reference page says of each. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { ClientId } from "../domain/Ids.ts"
import { Deleted, Page, PageQuery } from "../domain/Page.ts"
import { Thread, ThreadCreate, ThreadCreated, ThreadPatch } from "../domain/Thread.ts"
import { ThreadMessage } from "../domain/ThreadMessage.ts"
import { doc, docWithBody, ExampleIds } from "./ApiDocs.ts"
import { ApiConflict, ApiForbidden, ApiNotFound, ApiPayloadTooLarge, ApiServiceUnavailable } from "./ErrorEnvelope.ts"
import { IdempotencyHeaders } from "./Headers.ts"

const params = { id: ClientId.thread }

export const ThreadsApi = HttpApiGroup.make("threads")
  .add(
    HttpApiEndpoint.get("list", "/v1/threads", {
      query: { agentId: ClientId.agent, ...PageQuery },
      success: Page(Thread),
      error: [ApiForbidden, ApiNotFound]
    }).annotateMerge(
      doc(
        "List an agent's threads",
        "The threads of one agent (`agentId` is required), newest first, a page at a time. An unknown agent is 404 `agent_not_found`."
      )
    )
  )
  .add(
    HttpApiEndpoint.post("create", "/v1/threads", {
      payload: ThreadCreate,
      headers: IdempotencyHeaders,
      success: ThreadCreated.pipe(HttpApiSchema.status(201)),
      error: [ApiForbidden, ApiNotFound, ApiConflict, ApiPayloadTooLarge, ApiServiceUnavailable]
    }).annotateMerge(
      docWithBody(
        "Start a thread with an agent",
        "Opens a conversation with an agent; its messages start runs one at a time. A thread can add its own context blocks, " +
          "use another band than the agent's, require strict data handling and set the time zone runs see. " +
          "When the agent has a managed workspace the thread gets its own, started at its first run. " +
          "Answers 201; a retry with the same `Idempotency-Key` gets the same thread with `created: false`.",
        ThreadCreate,
        { agentId: ExampleIds.agent, timeZone: "Europe/Paris", metadata: { customer: "cus_1042" } }
      )
    )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/threads/:id", { params, success: Thread, error: [ApiForbidden, ApiNotFound] })
      .annotateMerge(
        doc(
          "Get a thread",
          "The thread's settings, whether a run holds it (`status`), and its managed workspace when it has one (state and preview URLs)."
        )
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/threads/:id", {
      params,
      payload: ThreadPatch,
      success: Thread,
      error: [ApiForbidden, ApiNotFound, ApiPayloadTooLarge]
    }).annotateMerge(
      docWithBody(
        "Update a thread",
        "Changes only the fields sent; `metadata` merges key by key. A new `context` keeps the cached prompt prefix stable: " +
          "it is folded in when the prefix is next rebuilt (at the next run with `forceRefresh: true`, a change of band, " +
          "or after a minute without turns). Strict data handling, once set, cannot be relaxed.",
        ThreadPatch,
        { context: [{ id: "plan", content: "The customer is on the Gold plan." }], forceRefresh: true }
      )
    )
  )
  .add(
    HttpApiEndpoint.delete("delete", "/v1/threads/:id", {
      params,
      success: Deleted("thread"),
      error: [ApiForbidden, ApiNotFound]
    }).annotateMerge(
      doc("Delete a thread", "Cancels the thread's active run, then deletes the thread with its runs.")
    )
  )
  .add(
    HttpApiEndpoint.get("messages", "/v1/threads/:id/messages", {
      params,
      query: { warm: Schema.optionalKey(Schema.Literal("1")), ...PageQuery },
      success: [Page(ThreadMessage), HttpApiSchema.NoContent],
      error: [ApiForbidden, ApiNotFound]
    }).annotateMerge(
      doc(
        "Read a thread's messages",
        "The conversation so far, oldest first, a page at a time, as the AI SDK's `UIMessage`s (`useChat` starts from them): " +
          "for each run the user's message (`msg_...`: its attachments as `file` parts, then its text) and the assistant's " +
          "(the run's id: text, reasoning when it was streamed, tool calls with their input and output, error or denial, " +
          "the stream's `data-svc-*` parts); `metadata` has the `runId` and its `createdAt`. A run still going shows what " +
          "is stored so far. With `warm=1`: 204 once the thread exists and belongs to you; it creates no run and costs nothing."
      )
    )
  )
  .annotate(OpenApi.Description, "Threads: conversations with an agent. Each message to a thread starts a run.")
