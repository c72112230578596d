/**
 * Result handler dispatch (spec 6.1): one signed JSON POST of an artifact to
 * the handler, answered by the 4.5 response contract (HandlerResponse.ts).
 *
 * Svc-Request-Id is derived from the caller's `requestKey`, so it is the same
 * for the same logical artifact (an oversized result: `<run>:<tool call>:overflow`).
 * A valid 2xx answer is journaled under it (ResultDeliveryRepo): a step
 * executed again after a crash gets the kept answer and the handler is not
 * called a second time. Failures are not journaled; the next attempt sends
 * the same request id, so the handler can deduplicate.
 */
import { Context, Data, Effect, Layer, Option } from "effect"
import { createHash } from "node:crypto"
import type { ResultHandlerId } from "../../domain/Ids.ts"
import type { HandlerAnswer } from "../../domain/ResultHandler.ts"
import { SignedDelivery } from "../delivery/SignedDelivery.ts"
import { IdGenerator } from "../IdGenerator.ts"
import { ResultDeliveryRepo } from "../store/ResultDeliveryRepo.ts"
import { nowIso } from "../Time.ts"
import * as HandlerResponse from "./HandlerResponse.ts"
import { type Owner, ResultHandlers } from "./ResultHandlers.ts"

/** The artifact's bytes: the text itself (an oversized result), inline base64, or where the service stores them. */
export type DispatchContent =
  | string
  | { readonly kind: "base64"; readonly base64: string; readonly mimeType: string }
  | { readonly kind: "url"; readonly url: string; readonly mimeType: string; readonly svcArtifactId: string }

export interface DispatchRequest {
  /** The run plan's handler. */
  readonly handlerId: ResultHandlerId
  readonly owner: Owner
  readonly runId: string
  readonly threadId: string
  readonly agentId: string
  readonly toolName: string
  readonly toolCallId: string
  /** 1-based, as in approval hook requests. */
  readonly stepNumber: number
  readonly mediaType: string
  /** Size of the artifact's bytes. */
  readonly bytes: number
  /** Lowercase hex SHA-256 of the artifact's bytes. */
  readonly sha256: string
  readonly content: DispatchContent
  readonly purpose: HandlerResponse.Purpose
  /** What Svc-Request-Id derives from: the same for the same logical artifact. */
  readonly requestKey: string
}

export interface Dispatched {
  readonly requestId: string
  readonly answer: HandlerAnswer
  /** The answer was kept from an earlier delivery of the same request id; the handler was not called. */
  readonly replayed: boolean
}

export class DispatchFailed extends Data.TaggedError("DispatchFailed")<{
  readonly reason: "not_found" | "timeout" | "status" | "unreachable" | "refused" | "invalid_response"
  /** result_handler_not_found, result_handler_response_invalid, or service_unavailable (the handler failed to answer). */
  readonly code: "result_handler_not_found" | "result_handler_response_invalid" | "service_unavailable"
  readonly message: string
  readonly requestId: string
  readonly status?: number
}> {}

/** Size and lowercase hex SHA-256 of a text's UTF-8 bytes (the body's `bytes` and `sha256` for text content). */
export const digestOf = (text: string): { readonly bytes: number; readonly sha256: string } => {
  const bytes = Buffer.from(text, "utf8")
  return { bytes: bytes.byteLength, sha256: createHash("sha256").update(bytes).digest("hex") }
}

export class ResultDispatch extends Context.Service<ResultDispatch, {
  readonly dispatch: (request: DispatchRequest) => Effect.Effect<Dispatched, DispatchFailed>
}>()("svc/ResultDispatch") {
  static readonly layer = Layer.effect(ResultDispatch)(
    Effect.gen(function*() {
      const handlers = yield* ResultHandlers
      const delivery = yield* SignedDelivery
      const ids = yield* IdGenerator
      const journal = yield* ResultDeliveryRepo

      const dispatch = Effect.fn("ResultDispatch.dispatch")(function*(r: DispatchRequest) {
        const requestId = ids.derive("request", r.requestKey)
        const failed = (reason: DispatchFailed["reason"], message: string, status?: number) =>
          new DispatchFailed({
            reason,
            code: reason === "not_found"
              ? "result_handler_not_found"
              : reason === "invalid_response"
              ? "result_handler_response_invalid"
              : "service_unavailable",
            message: `Result handler ${r.handlerId}: ${message}.`,
            requestId,
            ...(status === undefined ? {} : { status })
          })

        const kept = yield* journal.find(requestId, r.owner.organizationId, r.owner.workspaceId)
        if (Option.isSome(kept)) {
          const missing = HandlerResponse.missingFor(kept.value, r.purpose)
          if (missing !== undefined) {
            return yield* failed("invalid_response", `the kept answer cannot be used: ${missing}`)
          }
          return { requestId, answer: kept.value, replayed: true } satisfies Dispatched
        }

        const handler = yield* handlers.forDispatch(r.owner, r.handlerId)
        if (handler === undefined) {
          return yield* failed("not_found", "no such result handler in this workspace (it was deleted)")
        }
        const delivered = yield* delivery.post({
          url: handler.config.url,
          secret: handler.secret,
          timeoutMs: handler.config.requestTimeoutMs,
          requestId,
          maxResponseBytes: HandlerResponse.ResponseLimits.responseBytes,
          headers: {
            "svc-org-id": r.owner.organizationId,
            "svc-agent-id": r.agentId,
            "svc-run-id": r.runId,
            "svc-result-handler-id": r.handlerId,
            "svc-result-kind": "artifact"
          },
          body: {
            runId: r.runId,
            threadId: r.threadId,
            agentId: r.agentId,
            toolName: r.toolName,
            toolCallId: r.toolCallId,
            stepNumber: r.stepNumber,
            mediaType: r.mediaType,
            bytes: r.bytes,
            sha256: r.sha256,
            content: r.content
          }
        }).pipe(Effect.mapError((e) => failed(e.reason, e.message, e.status)))
        const parsed = delivered.tooLarge
          ? HandlerResponse.Parsed.Invalid({ message: HandlerResponse.tooLarge() })
          : HandlerResponse.parse(delivered.text, r.purpose)
        if (parsed._tag === "Invalid") {
          return yield* failed(
            "invalid_response",
            `HTTP ${delivered.status} with an invalid response: ${parsed.message}`,
            delivered.status
          )
        }
        yield* journal.save({
          requestId,
          runId: r.runId,
          organizationId: r.owner.organizationId,
          workspaceId: r.owner.workspaceId,
          resultHandlerId: r.handlerId,
          purpose: r.purpose,
          answer: parsed.answer,
          createdAt: yield* nowIso
        })
        return { requestId, answer: parsed.answer, replayed: false } satisfies Dispatched
      })

      return { dispatch }
    })
  ).pipe(Layer.provide(ResultDeliveryRepo.layer))
}
