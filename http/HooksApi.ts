/** Contract of tool approval hooks (4.10) and result handlers (4.5), with what the reference page says of each. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { ClientId } from "../domain/Ids.ts"
import { Deleted, Page, PageQuery } from "../domain/Page.ts"
import { ResultHandler, ResultHandlerCreate, ResultHandlerPatch } from "../domain/ResultHandler.ts"
import {
  HookCreate,
  HookPatch,
  HookTestResult,
  RotateSigningSecret,
  ToolApprovalHook
} from "../domain/ToolApprovalHook.ts"
import { doc, docWithBody } from "./ApiDocs.ts"
import {
  ApiBadGateway,
  ApiConflict,
  ApiForbidden,
  ApiNotFound,
  ApiPayloadTooLarge,
  ApiServiceUnavailable
} from "./ErrorEnvelope.ts"
import { IdempotencyHeaders } from "./Headers.ts"

const hookParams = { id: ClientId.hook }
const handlerParams = { id: ClientId.resultHandler }

/** Checked by the service so that a missing secret answers result_handler_secret_missing. */
const RotateHandlerSecret = Schema.Struct({ secret: Schema.optionalKey(Schema.Unknown) })

const signingSecret = "whsec_exampleOnly_3fK9qLm2Xv7Rt1Bn"

export const HooksApi = HttpApiGroup.make("hooks")
  .add(
    HttpApiEndpoint.get("list", "/v1/tool-approval-hooks", { query: PageQuery, success: Page(ToolApprovalHook) })
      .annotateMerge(
        doc(
          "List tool approval hooks",
          "The workspace's approval hooks, newest first, a page at a time. Signing secrets are never shown."
        )
      )
  )
  .add(
    HttpApiEndpoint.post("create", "/v1/tool-approval-hooks", {
      headers: IdempotencyHeaders,
      payload: HookCreate,
      success: ToolApprovalHook,
      error: [ApiConflict, ApiPayloadTooLarge, ApiServiceUnavailable]
    })
      .annotateMerge(
        docWithBody(
          "Register a tool approval hook",
          "An HTTPS endpoint that reviews tool calls before they run. For each call the connection's policy does not waive, it receives " +
            "a signed `tool_execution_review` (header `Svc-Signature`) and answers `allow`, `deny` or `pause` (wait for a person). " +
            "`onHookError` says what a failing hook means: deny the call (default), pause, or fail the run. " +
            "Agents use a hook through `approvals.toolExecution.hookId`.",
          HookCreate,
          {
            name: "security-review",
            url: "https://hooks.example.com/svc/review",
            secret: signingSecret,
            onHookError: "pause",
            requestTimeoutMs: 30_000
          }
        )
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/tool-approval-hooks/:id", {
      params: hookParams,
      success: ToolApprovalHook,
      error: [ApiForbidden, ApiNotFound]
    })
      .annotateMerge(
        doc(
          "Get a tool approval hook",
          "The hook's URL, enablement, error policy and timeout; never its signing secret."
        )
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/tool-approval-hooks/:id", {
      params: hookParams,
      payload: HookPatch,
      success: ToolApprovalHook,
      error: [ApiForbidden, ApiNotFound, ApiConflict, ApiPayloadTooLarge]
    })
      .annotateMerge(
        docWithBody(
          "Update a tool approval hook",
          "Changes its name, URL, enablement, error policy or timeout, or merges metadata. A disabled hook is never called: " +
            "the connections' approval policy alone decides, and gated calls wait for a person.",
          HookPatch,
          { enabled: false }
        )
      )
  )
  .add(
    HttpApiEndpoint.delete("delete", "/v1/tool-approval-hooks/:id", {
      params: hookParams,
      success: Deleted("tool_approval_hook"),
      error: [ApiForbidden, ApiNotFound, ApiConflict]
    })
      .annotateMerge(
        doc(
          "Delete a tool approval hook",
          "Deletes the hook unless agents use it: then 409 `resource_in_use` with `details.inUseByAgentIds`."
        )
      )
  )
  .add(
    HttpApiEndpoint.post("rotateSecret", "/v1/tool-approval-hooks/:id/rotate-secret", {
      headers: IdempotencyHeaders,
      params: hookParams,
      payload: RotateSigningSecret,
      success: ToolApprovalHook,
      error: [ApiForbidden, ApiNotFound, ApiConflict, ApiPayloadTooLarge, ApiServiceUnavailable]
    }).annotateMerge(
      docWithBody(
        "Rotate a hook's signing secret",
        "Replaces the secret that signs the hook's review requests; every request sent afterwards is signed with the new one.",
        RotateSigningSecret,
        { secret: "whsec_rotatedExampleOnly_8Hj2Kp5Qw" }
      )
    )
  )
  .add(
    HttpApiEndpoint.post("test", "/v1/tool-approval-hooks/:id/test", {
      headers: IdempotencyHeaders,
      params: hookParams,
      success: HookTestResult,
      error: [ApiForbidden, ApiNotFound, ApiBadGateway, ApiConflict, ApiServiceUnavailable]
    })
      .annotateMerge(
        doc(
          "Send a hook a test review",
          "Sends the hook a signed synthetic review (`toolName: \"svc_hook_test\"`) and reports that it was delivered, how long it took " +
            "and what the hook decided. An unreachable hook, a timeout, a non-2xx answer or a body other than `{ decision, reason? }` " +
            "is 502 `service_unavailable`, the cause in the message."
        )
      )
  )
  .annotate(
    OpenApi.Description,
    "Tool approval hooks: your endpoints that allow, deny or pause a run's tool calls before they run."
  )

export const ResultHandlersApi = HttpApiGroup.make("resultHandlers")
  .add(
    HttpApiEndpoint.get("list", "/v1/result-handlers", { query: PageQuery, success: Page(ResultHandler) })
      .annotateMerge(
        doc(
          "List result handlers",
          "The workspace's result handlers, newest first, a page at a time. Signing secrets are never shown."
        )
      )
  )
  .add(
    HttpApiEndpoint.post("create", "/v1/result-handlers", {
      headers: IdempotencyHeaders,
      payload: ResultHandlerCreate,
      success: ResultHandler,
      error: [ApiConflict, ApiPayloadTooLarge, ApiServiceUnavailable]
    })
      .annotateMerge(
        docWithBody(
          "Register a result handler",
          "An HTTPS endpoint that receives what runs produce (`kind: \"artifact\"`, the one kind), in signed POSTs. " +
            "A secret is required (400 `result_handler_secret_missing` without one). Agents name handlers in `artifacts.exports` " +
            "and `artifacts.oversizedToolResults`.",
          ResultHandlerCreate,
          {
            kind: "artifact",
            name: "archive",
            url: "https://files.example.com/svc/artifacts",
            secret: signingSecret,
            requestTimeoutMs: 30_000
          }
        )
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/result-handlers/:id", {
      params: handlerParams,
      success: ResultHandler,
      error: [ApiForbidden, ApiNotFound]
    })
      .annotateMerge(
        doc("Get a result handler", "The handler's kind, URL and timeout; never its signing secret.")
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/result-handlers/:id", {
      params: handlerParams,
      payload: ResultHandlerPatch,
      success: ResultHandler,
      error: [ApiForbidden, ApiNotFound, ApiConflict, ApiPayloadTooLarge]
    })
      .annotateMerge(
        docWithBody(
          "Update a result handler",
          "Changes its name, URL or timeout, or merges metadata. The signing secret changes only by rotating it.",
          ResultHandlerPatch,
          { url: "https://files.example.com/svc/artifacts-v2", requestTimeoutMs: 60_000 }
        )
      )
  )
  .add(
    HttpApiEndpoint.delete("delete", "/v1/result-handlers/:id", {
      params: handlerParams,
      success: Deleted("result_handler"),
      error: [ApiForbidden, ApiNotFound, ApiConflict]
    })
      .annotateMerge(
        doc(
          "Delete a result handler",
          "Deletes the handler unless agents use it: then 409 `resource_in_use` with `details.inUseByAgentIds`."
        )
      )
  )
  .add(
    HttpApiEndpoint.post("rotateSecret", "/v1/result-handlers/:id/rotate-secret", {
      headers: IdempotencyHeaders,
      params: handlerParams,
      payload: RotateHandlerSecret,
      success: ResultHandler,
      error: [ApiForbidden, ApiNotFound, ApiConflict, ApiPayloadTooLarge, ApiServiceUnavailable]
    }).annotateMerge(
      docWithBody(
        "Rotate a result handler's signing secret",
        "Replaces the secret that signs deliveries to the handler (400 `result_handler_secret_missing` without one).",
        RotateHandlerSecret,
        { secret: "whsec_rotatedExampleOnly_4Tm8Vx1Zc" }
      )
    )
  )
  .annotate(
    OpenApi.Description,
    "Result handlers: your endpoints that receive the artifacts runs produce, in signed deliveries."
  )
