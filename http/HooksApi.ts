/** Contract of tool approval hooks (4.10) and result handlers (4.5). */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
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

const hookParams = { id: ClientId.hook }
const handlerParams = { id: ClientId.resultHandler }

export const HooksApi = HttpApiGroup.make("hooks")
  .add(HttpApiEndpoint.get("list", "/v1/tool-approval-hooks", { query: PageQuery, success: Page(ToolApprovalHook) }))
  .add(HttpApiEndpoint.post("create", "/v1/tool-approval-hooks", { payload: HookCreate, success: ToolApprovalHook }))
  .add(HttpApiEndpoint.get("get", "/v1/tool-approval-hooks/:id", { params: hookParams, success: ToolApprovalHook }))
  .add(HttpApiEndpoint.patch("update", "/v1/tool-approval-hooks/:id", { params: hookParams, payload: HookPatch, success: ToolApprovalHook }))
  .add(HttpApiEndpoint.delete("delete", "/v1/tool-approval-hooks/:id", { params: hookParams, success: Deleted("tool_approval_hook") }))
  .add(
    HttpApiEndpoint.post("rotateSecret", "/v1/tool-approval-hooks/:id/rotate-secret", {
      params: hookParams,
      payload: RotateSigningSecret,
      success: ToolApprovalHook
    })
  )
  .add(HttpApiEndpoint.post("test", "/v1/tool-approval-hooks/:id/test", { params: hookParams, success: HookTestResult }))

export const ResultHandlersApi = HttpApiGroup.make("resultHandlers")
  .add(HttpApiEndpoint.get("list", "/v1/result-handlers", { query: PageQuery, success: Page(ResultHandler) }))
  .add(HttpApiEndpoint.post("create", "/v1/result-handlers", { payload: ResultHandlerCreate, success: ResultHandler }))
  .add(HttpApiEndpoint.get("get", "/v1/result-handlers/:id", { params: handlerParams, success: ResultHandler }))
  .add(
    HttpApiEndpoint.patch("update", "/v1/result-handlers/:id", { params: handlerParams, payload: ResultHandlerPatch, success: ResultHandler })
  )
  .add(HttpApiEndpoint.delete("delete", "/v1/result-handlers/:id", { params: handlerParams, success: Deleted("result_handler") }))
  .add(
    HttpApiEndpoint.post("rotateSecret", "/v1/result-handlers/:id/rotate-secret", {
      params: handlerParams,
      // Checked by the service so that a missing secret answers result_handler_secret_missing.
      payload: Schema.Struct({ secret: Schema.optionalKey(Schema.Unknown) }),
      success: ResultHandler
    })
  )
