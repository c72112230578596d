/** Handlers of the thread resource routes. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { ThreadCreated } from "../domain/Thread.ts"
import { Idempotency } from "../src/access/Idempotency.ts"
import { Runs } from "../src/runs/Runs.ts"
import { Threads } from "../src/threads/Threads.ts"
import { Api } from "./Api.ts"
import { CurrentPrincipal } from "./ApiMiddleware.ts"
import { envelope } from "./ErrorEnvelope.ts"

export const ThreadsHandlers = HttpApiBuilder.group(Api, "threads", (handlers) =>
  Effect.gen(function*() {
    const threads = yield* Threads
    const runs = yield* Runs
    const idempotency = yield* Idempotency
    return handlers
      .handle("list", ({ query }) =>
        Effect.flatMap(CurrentPrincipal, (p) => threads.list(p, query.agentId, query)).pipe(envelope))
      .handle("create", ({ payload, headers }) =>
        Effect.flatMap(CurrentPrincipal, (p) =>
          idempotency.run(
            { principal: p, method: "POST", path: "/v1/threads", key: headers["idempotency-key"], body: payload },
            { schema: ThreadCreated, status: 201, onReplay: (t) => ({ ...t, created: false }) },
            Effect.map(threads.create(p, payload), (t) => ({ ...t, created: true }))
          )).pipe(envelope))
      .handle("get", ({ params }) =>
        Effect.flatMap(CurrentPrincipal, (p) => threads.get(p, params.id)).pipe(envelope))
      .handle("update", ({ params, payload }) =>
        Effect.flatMap(CurrentPrincipal, (p) =>
          threads.update(p, params.id, payload)).pipe(envelope))
      .handle("delete", ({ params }) =>
        Effect.flatMap(CurrentPrincipal, (p) =>
          // An active run is cancelled first: a thread never disappears under a running turn.
          Effect.andThen(runs.cancelThread(p, params.id), threads.remove(p, params.id))).pipe(envelope))
  }))
