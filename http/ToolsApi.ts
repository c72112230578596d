/** Contract of tool servers (4.6) and HTTP connections (4.7). */
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import {
  HttpConnection,
  HttpConnectionCreate,
  HttpConnectionPatch,
  HttpConnectionTestResult
} from "../domain/HttpConnection.ts"
import { ClientId } from "../domain/Ids.ts"
import { Deleted, Page, PageQuery } from "../domain/Page.ts"
import { ToolServer, ToolServerCreate, ToolServerPatch, ToolServerTestResult } from "../domain/ToolServer.ts"

const serverParams = { id: ClientId.toolServer }
const connectionParams = { id: ClientId.httpConnection }

export const ToolServersApi = HttpApiGroup.make("toolServers")
  .add(HttpApiEndpoint.get("list", "/v1/tool-servers", { query: PageQuery, success: Page(ToolServer) }))
  .add(HttpApiEndpoint.post("create", "/v1/tool-servers", { payload: ToolServerCreate, success: ToolServer }))
  .add(HttpApiEndpoint.get("get", "/v1/tool-servers/:id", { params: serverParams, success: ToolServer }))
  .add(HttpApiEndpoint.patch("update", "/v1/tool-servers/:id", { params: serverParams, payload: ToolServerPatch, success: ToolServer }))
  .add(HttpApiEndpoint.delete("delete", "/v1/tool-servers/:id", { params: serverParams, success: Deleted("tool_server") }))
  .add(HttpApiEndpoint.post("test", "/v1/tool-servers/:id/test", { params: serverParams, success: ToolServerTestResult }))

export const HttpConnectionsApi = HttpApiGroup.make("httpConnections")
  .add(HttpApiEndpoint.get("list", "/v1/http-connections", { query: PageQuery, success: Page(HttpConnection) }))
  .add(HttpApiEndpoint.post("create", "/v1/http-connections", { payload: HttpConnectionCreate, success: HttpConnection }))
  .add(HttpApiEndpoint.get("get", "/v1/http-connections/:id", { params: connectionParams, success: HttpConnection }))
  .add(
    HttpApiEndpoint.patch("update", "/v1/http-connections/:id", { params: connectionParams, payload: HttpConnectionPatch, success: HttpConnection })
  )
  .add(HttpApiEndpoint.delete("delete", "/v1/http-connections/:id", { params: connectionParams, success: Deleted("http_connection") }))
  .add(HttpApiEndpoint.post("test", "/v1/http-connections/:id/test", { params: connectionParams, success: HttpConnectionTestResult }))
