/** Contract of tool servers (4.6) and HTTP connections (4.7). */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import {
  HttpConnection,
  HttpConnectionCreate,
  HttpConnectionPatch,
  HttpConnectionTestResult
} from "../domain/HttpConnection.ts"
import { Deleted, Page, PageQuery } from "../domain/Page.ts"
import { ToolServer, ToolServerCreate, ToolServerPatch, ToolServerTestResult } from "../domain/ToolServer.ts"

const params = { id: Schema.String }

export const ToolServersApi = HttpApiGroup.make("toolServers")
  .add(HttpApiEndpoint.get("list", "/v1/tool-servers", { query: PageQuery, success: Page(ToolServer) }))
  .add(HttpApiEndpoint.post("create", "/v1/tool-servers", { payload: ToolServerCreate, success: ToolServer }))
  .add(HttpApiEndpoint.get("get", "/v1/tool-servers/:id", { params, success: ToolServer }))
  .add(HttpApiEndpoint.patch("update", "/v1/tool-servers/:id", { params, payload: ToolServerPatch, success: ToolServer }))
  .add(HttpApiEndpoint.delete("delete", "/v1/tool-servers/:id", { params, success: Deleted("tool_server") }))
  .add(HttpApiEndpoint.post("test", "/v1/tool-servers/:id/test", { params, success: ToolServerTestResult }))

export const HttpConnectionsApi = HttpApiGroup.make("httpConnections")
  .add(HttpApiEndpoint.get("list", "/v1/http-connections", { query: PageQuery, success: Page(HttpConnection) }))
  .add(HttpApiEndpoint.post("create", "/v1/http-connections", { payload: HttpConnectionCreate, success: HttpConnection }))
  .add(HttpApiEndpoint.get("get", "/v1/http-connections/:id", { params, success: HttpConnection }))
  .add(
    HttpApiEndpoint.patch("update", "/v1/http-connections/:id", { params, payload: HttpConnectionPatch, success: HttpConnection })
  )
  .add(HttpApiEndpoint.delete("delete", "/v1/http-connections/:id", { params, success: Deleted("http_connection") }))
  .add(HttpApiEndpoint.post("test", "/v1/http-connections/:id/test", { params, success: HttpConnectionTestResult }))
