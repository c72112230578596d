/**
 * Tool approval hooks (spec 4.10): registration, secret rotation, and the
 * `test` route, which sends a synthetic `tool_execution_review` (6.1) and
 * reports the hook's decision.
 */
import { Context, Data, Effect, Layer, Redacted, Schema } from "effect"
import { UpstreamFailed } from "../../domain/Errors.ts"
import { HookId } from "../../domain/Ids.ts"
import type { PageRequest } from "../../domain/Page.ts"
import type { Principal } from "../../domain/Principal.ts"
import {
  HookConfig,
  type HookCreate,
  HookDecision,
  type HookPatch,
  HookTimeoutCeilingMs,
  type ToolApprovalHook
} from "../../domain/ToolApprovalHook.ts"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { SignedDelivery } from "../delivery/SignedDelivery.ts"
import { IdGenerator } from "../IdGenerator.ts"
import { Outbound } from "../outbound/Outbound.ts"
import { SecretBox } from "../secrets/SecretBox.ts"
import { ResourceStore } from "../store/ResourceStore.ts"
import { agentsReferencing, makeCrud, rowFields } from "../tools/AdapterCrud.ts"

const decodeDecision = Schema.decodeUnknownEffect(Schema.fromJsonString(HookDecision))

/** The hook answered, but not with a decision. */
export class InvalidHookAnswer extends Data.TaggedError("InvalidHookAnswer")<{ readonly message: string }> {}

const make = Effect.gen(function*() {
  const store = yield* ResourceStore
  const ids = yield* IdGenerator
  const box = yield* SecretBox
  const outbound = yield* Outbound
  const delivery = yield* SignedDelivery
  const config = yield* ServiceConfig
  const crud = makeCrud(store, ids, {
    table: "tool_approval_hooks",
    idKind: "hook",
    id: HookId,
    resource: "tool_approval_hook",
    uniqueNames: false,
    config: HookConfig,
    view: (row, c): ToolApprovalHook => ({
      ...rowFields(row),
      object: "tool_approval_hook",
      url: c.url,
      enabled: c.enabled,
      onHookError: c.onHookError,
      requestTimeoutMs: c.requestTimeoutMs
    })
  })

  /** Sends one review request; the answer must be a valid decision. */
  const review = Effect.fn("ToolApprovalHooks.review")(function*(
    hook: { readonly config: HookConfig; readonly secret: Redacted.Redacted },
    body: Record<string, unknown>
  ) {
    const delivered = yield* delivery.post({
      url: hook.config.url,
      secret: hook.secret,
      body,
      timeoutMs: hook.config.requestTimeoutMs
    })
    const decision = yield* decodeDecision(delivered.text).pipe(
      Effect.mapError(() =>
        new InvalidHookAnswer({
          message:
            `the hook answered HTTP ${delivered.status} without a valid { decision: 'allow' | 'deny' | 'pause', reason? } body`
        })
      )
    )
    return { decision, latencyMs: delivered.latencyMs }
  })

  return {
    create: Effect.fn("ToolApprovalHooks.create")(function*(principal: Principal, input: HookCreate) {
      const url = yield* outbound.checkUrl(input.url, "url")
      return yield* crud.create(principal, {
        name: input.name,
        config: {
          url: url.toString(),
          enabled: input.enabled ?? true,
          onHookError: input.onHookError ?? "deny",
          requestTimeoutMs: input.requestTimeoutMs ?? HookTimeoutCeilingMs
        },
        metadata: input.metadata ?? {},
        sealed: yield* box.seal(Redacted.make(input.secret))
      })
    }),
    get: (principal: Principal, id: HookId) => crud.get(principal, id),
    list: (principal: Principal, page: PageRequest) => crud.list(principal, page),
    update: Effect.fn("ToolApprovalHooks.update")(function*(principal: Principal, id: HookId, patch: HookPatch) {
      const current = yield* crud.load(principal, id)
      const url = patch.url === undefined ? current.config.url : (yield* outbound.checkUrl(patch.url, "url")).toString()
      const next: HookConfig = {
        url,
        enabled: patch.enabled ?? current.config.enabled,
        onHookError: patch.onHookError ?? current.config.onHookError,
        requestTimeoutMs: patch.requestTimeoutMs === undefined
          ? current.config.requestTimeoutMs
          : patch.requestTimeoutMs ?? HookTimeoutCeilingMs
      }
      return yield* crud.saveEdit(principal, current, patch, next)
    }),
    rotateSecret: Effect.fn("ToolApprovalHooks.rotateSecret")(
      function*(principal: Principal, id: HookId, secret: string) {
        const current = yield* crud.load(principal, id)
        const sealed = yield* box.seal(Redacted.make(secret))
        return yield* crud.save(principal, current, { ...current.row, config: current.config, sealed }, true)
      }
    ),
    remove: (principal: Principal, id: HookId) =>
      crud.remove(
        principal,
        id,
        () => agentsReferencing(store, principal, [{ approvals: { toolExecution: { hookId: id } } }])
      ),
    requireRef: crud.requireRef,
    /** The agent's hook for a run: undefined when it is disabled (policy only, no hook call) or gone. */
    forRun: Effect.fn("ToolApprovalHooks.forRun")(function*(principal: Principal, id: HookId) {
      const loaded = yield* crud.load(principal, id).pipe(Effect.option)
      if (loaded._tag === "None" || !loaded.value.config.enabled || loaded.value.row.sealed === null) return undefined
      return { id, config: loaded.value.config, secret: yield* box.open(loaded.value.row.sealed) }
    }),
    /** `POST /v1/tool-approval-hooks/:id/test`: a synthetic review; any failure is 502 service_unavailable. */
    test: Effect.fn("ToolApprovalHooks.test")(function*(principal: Principal, id: HookId) {
      const current = yield* crud.load(principal, id)
      if (current.row.sealed === null) return yield* Effect.die(new Error(`hook ${id} has no signing secret`))
      const secret = yield* box.open(current.row.sealed)
      const interactionId = yield* ids.make("interaction")
      const runId = yield* ids.make("run")
      const body = {
        type: "tool_execution_review",
        id: interactionId,
        runId,
        rootRunId: runId,
        threadId: yield* ids.make("thread"),
        agentId: yield* ids.make("agent"),
        stepNumber: 1,
        toolName: "svc_hook_test",
        toolCallId: yield* ids.make("toolCall"),
        input: { test: true },
        preview: {
          summary: "Synthetic review request sent by POST /v1/tool-approval-hooks/:id/test; nothing will run."
        },
        resolveUrl: `${config.publicUrl}/v1/interactions/${interactionId}/resolve`
      }
      const result = yield* review({ config: current.config, secret }, body).pipe(
        Effect.mapError((e) =>
          new UpstreamFailed({ code: "service_unavailable", message: `Hook test failed: ${e.message}.` })
        )
      )
      return {
        delivered: true as const,
        latencyMs: result.latencyMs,
        decision: result.decision.decision,
        ...(result.decision.reason === undefined ? {} : { reason: result.decision.reason })
      }
    }),
    review
  }
})

export class ToolApprovalHooks extends Context.Service<ToolApprovalHooks, Effect.Success<typeof make>>()(
  "svc/ToolApprovalHooks"
) {
  static readonly layer = Layer.effect(ToolApprovalHooks)(make).pipe(
    Layer.provide([ResourceStore.layer, SignedDelivery.layer])
  )
}
