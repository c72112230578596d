/** Handlers of the thread resource routes. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { ThreadCreated } from "../domain/Thread.ts"
import { Idempotency } from "../src/access/Idempotency.ts"
import { Runs } from "../src/runs/Runs.ts"
import { History } from "../src/threads/History.ts"
import { Threads } from "../src/threads/Threads.ts"
import { Api } from "./Api.ts"
import { authed } from "./ApiMiddleware.ts"

export const ThreadsHandlers = HttpApiBuilder.group(Api, "threads", (handlers) =>
  Effect.gen(function*() {
    const threads = yield* Threads
    const runs = yield* Runs
    const idempotency = yield* Idempotency
    const history = yield* History
    return handlers
      .handle("list", ({ query }) => authed((p) => threads.list(p, query.agentId, query)))
      .handle("create", ({ payload, headers }) =>
        authed((p) =>
          idempotency.run(
            { principal: p, method: "POST", path: "/v1/threads", key: headers["idempotency-key"], body: payload },
            { schema: ThreadCreated, status: 201, onReplay: (t) => ({ ...t, created: false }) },
            Effect.map(threads.create(p, payload), (t) => ({ ...t, created: true }))
          )
        ))
      .handle("get", ({ params }) => authed((p) => threads.get(p, params.id)))
      .handle("update", ({ params, payload }) => authed((p) => threads.update(p, params.id, payload)))
      .handle("delete", ({ params }) =>
        authed((p) =>
          // An active run is cancelled first: a thread never disappears under a running turn.
          Effect.andThen(runs.cancelThread(p, params.id), threads.remove(p, params.id))
        ))
      .handle("messages", ({ params, query: { warm, ...page } }) =>
        authed((p) => (warm === "1" ? runs.warm(p, params.id) : history.page(p, params.id, page))))
  }))
