/** Contract of the thread resource routes (spec 4.2). */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { ClientId } from "../domain/Ids.ts"
import { Deleted, Page, PageQuery } from "../domain/Page.ts"
import { Thread, ThreadCreate, ThreadCreated, ThreadPatch } from "../domain/Thread.ts"
import { IdempotencyHeaders } from "./Headers.ts"

const params = { id: ClientId.thread }

export const ThreadsApi = HttpApiGroup.make("threads")
  .add(
    HttpApiEndpoint.get("list", "/v1/threads", {
      query: { agentId: ClientId.agent, ...PageQuery },
      success: Page(Thread)
    })
  )
  .add(
    HttpApiEndpoint.post("create", "/v1/threads", {
      payload: ThreadCreate,
      headers: IdempotencyHeaders,
      success: ThreadCreated.pipe(HttpApiSchema.status(201))
    })
  )
  .add(HttpApiEndpoint.get("get", "/v1/threads/:id", { params, success: Thread }))
  .add(HttpApiEndpoint.patch("update", "/v1/threads/:id", { params, payload: ThreadPatch, success: Thread }))
  .add(HttpApiEndpoint.delete("delete", "/v1/threads/:id", { params, success: Deleted("thread") }))
