/** Handlers of runs and the thread run routes. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { InvalidRequest } from "../domain/Errors.ts"
import { Run, RunReceipt } from "../domain/Run.ts"
import { Idempotency } from "../src/access/Idempotency.ts"
import { Runs } from "../src/runs/Runs.ts"
import { Api } from "./Api.ts"
import { authed } from "./ApiMiddleware.ts"
import { Draining } from "./Draining.ts"
import { idempotent } from "./Idempotent.ts"
import { ThreadCancel } from "./RunsApi.ts"
import { sseResponse } from "./SseResponse.ts"

const wantsJson = (accept: string | undefined) => accept !== undefined && accept.includes("application/json")

const parseLastEventId = (raw: string | undefined) => {
  if (raw === undefined || raw === "") return Effect.succeed(0)
  return /^\d{1,9}$/.test(raw)
    ? Effect.succeed(Number(raw))
    : Effect.fail(InvalidRequest.forField("Last-Event-ID", "Last-Event-ID must be a frame id this stream sent."))
}

export const RunsHandlers = HttpApiBuilder.group(Api, "runs", (handlers) =>
  Effect.gen(function*() {
    const runs = yield* Runs
    const idempotency = yield* Idempotency
    const draining = yield* Draining
    return handlers
      .handle("message", ({ params, payload, headers }) =>
        authed((p) =>
          Effect.gen(function*() {
            const key = headers["idempotency-key"] ?? payload.idempotencyKey
            const request = {
              principal: p,
              method: "POST",
              path: `/v1/threads/${params.id}/messages`,
              key,
              body: payload
            }
            const wrap = <E>(start: Effect.Effect<RunReceipt, E>) =>
              idempotency.run(request, { schema: RunReceipt, status: 200 }, start)
            if (wantsJson(headers.accept)) return yield* wrap(runs.start(p, params.id, payload, key))
            const { receipt, stream } = yield* runs.startStreaming(p, params.id, payload, key, wrap)
            return sseResponse(receipt.runId, stream, draining.started)
          })
        ))
      .handle("cancelThread", (route) =>
        authed(idempotent(route, ThreadCancel, (p) => runs.cancelThread(p, route.params.id))))
      .handle("start", ({ payload, headers }) =>
        authed((p) => {
          const key = headers["idempotency-key"] ?? payload.idempotencyKey
          const { threadId, ...input } = payload
          return idempotency.run(
            { principal: p, method: "POST", path: "/v1/runs", key, body: payload },
            { schema: RunReceipt, status: 200 },
            runs.start(p, threadId, input, key)
          )
        }))
      .handle("list", ({ query }) =>
        authed((p) =>
          runs.list(p, {
            agentId: query.agentId,
            threadId: query.threadId,
            status: query.status,
            createdSince: query.createdSince
          }, query)
        ))
      .handle("get", ({ params }) =>
        authed((p) => runs.get(p, params.id)))
      .handle("stream", ({ params, headers }) =>
        authed((p) =>
          Effect.gen(function*() {
            const after = yield* parseLastEventId(headers["last-event-id"])
            return sseResponse(params.id, yield* runs.stream(p, params.id, after), draining.started)
          })
        ))
      .handle("workerStream", ({ params, headers }) =>
        authed((p) =>
          Effect.gen(function*() {
            const after = yield* parseLastEventId(headers["last-event-id"])
            const { runId, stream } = yield* runs.workerStream(p, params.id, params.workerRef, after)
            return sseResponse(runId, stream, draining.started)
          })
        ))
      .handle("cancel", (route) => authed(idempotent(route, Run, (p) => runs.cancel(p, route.params.id))))
      .handle(
        "withdrawFollowup",
        ({ params }) => authed((p) => runs.withdrawFollowup(p, params.id, params.followupId))
      )
  }))
