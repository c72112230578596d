/** Contract of tool servers (4.6) and HTTP connections (4.7), with what the reference page says of each. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import {
  HttpConnection,
  HttpConnectionCreate,
  HttpConnectionPatch,
  HttpConnectionTestResult
} from "../domain/HttpConnection.ts"
import { ClientId } from "../domain/Ids.ts"
import { Deleted, Page, PageQuery } from "../domain/Page.ts"
import { ToolServer, ToolServerCreate, ToolServerPatch, ToolServerTestResult } from "../domain/ToolServer.ts"
import { doc, docWithBody, ExampleIds } from "./ApiDocs.ts"
import {
  ApiBadGateway,
  ApiConflict,
  ApiForbidden,
  ApiNotFound,
  ApiPayloadTooLarge,
  ApiServiceUnavailable
} from "./ErrorEnvelope.ts"
import { IdempotencyHeaders } from "./Headers.ts"

const serverParams = { id: ClientId.toolServer }
const connectionParams = { id: ClientId.httpConnection }

const policyNote =
  "`approval` (`once`, `always`, `never`) and `gatedTools` decide which calls need review, `resultCapBytes` caps what one call returns, " +
  "and `defer: false` offers every tool's full schema from the first step (by default the model loads them on demand)."

export const ToolServersApi = HttpApiGroup.make("toolServers")
  .add(
    HttpApiEndpoint.get("list", "/v1/tool-servers", { query: PageQuery, success: Page(ToolServer) }).annotateMerge(
      doc("List MCP tool servers", "The workspace's registered MCP servers, newest first, a page at a time.")
    )
  )
  .add(
    HttpApiEndpoint.post("create", "/v1/tool-servers", {
      headers: IdempotencyHeaders,
      payload: ToolServerCreate,
      success: ToolServer,
      error: [ApiConflict, ApiPayloadTooLarge, ApiServiceUnavailable]
    })
      .annotateMerge(
        docWithBody(
          "Register an MCP tool server",
          "An MCP server reached over Streamable HTTP (`http`) or HTTP+SSE (`sse`), with a bearer secret when it needs one. " +
            "Its tools reach the model as `mcp__<server>__<tool>`; `allowedTools` and `blockedTools` filter them. " +
            policyNote +
            " The URL must pass the outbound URL policy (https, public addresses only). Agents use it through `capabilities.mcp.toolServerIds`.",
          ToolServerCreate,
          {
            name: "github",
            transport: "http",
            url: "https://mcp.example.com/mcp",
            auth: { type: "bearer", secretId: ExampleIds.secret },
            allowedTools: ["search_issues", "get_issue", "create_comment"],
            approval: "once",
            gatedTools: ["create_comment"]
          }
        )
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/tool-servers/:id", {
      params: serverParams,
      success: ToolServer,
      error: [ApiForbidden, ApiNotFound]
    }).annotateMerge(
      doc(
        "Get an MCP tool server",
        "The server's transport, URL, tool filter and call policy, and its `configVersion`."
      )
    )
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/tool-servers/:id", {
      params: serverParams,
      payload: ToolServerPatch,
      success: ToolServer,
      error: [ApiForbidden, ApiNotFound, ApiConflict, ApiPayloadTooLarge]
    }).annotateMerge(
      docWithBody(
        "Update an MCP tool server",
        "Changes only the fields sent (`null` clears a filter or the approval policy); structural changes increment `configVersion`. " +
          "Runs already started keep the snapshot they began with.",
        ToolServerPatch,
        { blockedTools: ["delete_repository"], enabled: true }
      )
    )
  )
  .add(
    HttpApiEndpoint.delete("delete", "/v1/tool-servers/:id", {
      params: serverParams,
      success: Deleted("tool_server"),
      error: [ApiForbidden, ApiNotFound, ApiConflict]
    })
      .annotateMerge(
        doc(
          "Delete an MCP tool server",
          "Deletes the server unless agents use it: then 409 `resource_in_use` with `details.inUseByAgentIds`."
        )
      )
  )
  .add(
    HttpApiEndpoint.post("test", "/v1/tool-servers/:id/test", {
      headers: IdempotencyHeaders,
      params: serverParams,
      success: ToolServerTestResult,
      error: [ApiForbidden, ApiNotFound, ApiBadGateway, ApiConflict, ApiServiceUnavailable]
    })
      .annotateMerge(
        doc(
          "Test an MCP tool server",
          "Connects with the registered transport and auth, lists the server's tools (every page), applies the filter and closes: " +
            "the answer names the tools the model would get."
        )
      )
  )
  .annotate(OpenApi.Description, "Tool servers: MCP servers whose tools agents may call.")

export const HttpConnectionsApi = HttpApiGroup.make("httpConnections")
  .add(
    HttpApiEndpoint.get("list", "/v1/http-connections", { query: PageQuery, success: Page(HttpConnection) })
      .annotateMerge(
        doc("List HTTP connections", "The workspace's HTTP connections, newest first, a page at a time.")
      )
  )
  .add(
    HttpApiEndpoint.post("create", "/v1/http-connections", {
      headers: IdempotencyHeaders,
      payload: HttpConnectionCreate,
      success: HttpConnection,
      error: [ApiConflict, ApiPayloadTooLarge, ApiServiceUnavailable]
    })
      .annotateMerge(
        docWithBody(
          "Register an HTTP connection",
          "An HTTP API described by an OpenAPI 3.x or Swagger 2.0 document, given as a URL or as the JSON itself. " +
            "Each operation becomes a tool `api__<connection>__<operation>`; `allowedOperations` keeps only those named, " +
            "`baseUrl` overrides the document's servers (bearer auth requires it). " + policyNote +
            " Agents use it through `capabilities.http.connectionIds`.",
          HttpConnectionCreate,
          {
            name: "billing",
            spec: "https://api.example.com/openapi.json",
            baseUrl: "https://api.example.com/v2",
            allowedOperations: ["listInvoices", "getInvoice"],
            approval: "never"
          }
        )
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/http-connections/:id", {
      params: connectionParams,
      success: HttpConnection,
      error: [ApiForbidden, ApiNotFound]
    })
      .annotateMerge(
        doc(
          "Get an HTTP connection",
          "The connection's document source, base URL, allowed operations and call policy, and its `configVersion`."
        )
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/http-connections/:id", {
      params: connectionParams,
      payload: HttpConnectionPatch,
      success: HttpConnection,
      error: [ApiForbidden, ApiNotFound, ApiConflict, ApiPayloadTooLarge]
    })
      .annotateMerge(
        docWithBody(
          "Update an HTTP connection",
          "Changes only the fields sent (`baseUrl: null` goes back to the document's servers); structural changes increment " +
            "`configVersion`. Runs already started keep the snapshot they began with.",
          HttpConnectionPatch,
          { allowedOperations: ["listInvoices"], requestTimeoutMs: 20_000 }
        )
      )
  )
  .add(
    HttpApiEndpoint.delete("delete", "/v1/http-connections/:id", {
      params: connectionParams,
      success: Deleted("http_connection"),
      error: [ApiForbidden, ApiNotFound, ApiConflict]
    })
      .annotateMerge(
        doc(
          "Delete an HTTP connection",
          "Deletes the connection unless agents use it: then 409 `resource_in_use` with `details.inUseByAgentIds`."
        )
      )
  )
  .add(
    HttpApiEndpoint.post("test", "/v1/http-connections/:id/test", {
      headers: IdempotencyHeaders,
      params: connectionParams,
      success: HttpConnectionTestResult,
      error: [ApiForbidden, ApiNotFound, ApiBadGateway, ApiConflict, ApiServiceUnavailable]
    })
      .annotateMerge(
        doc(
          "Test an HTTP connection",
          "Loads and parses the document and answers the tools it yields (`operationCount`, `tools`). An unloadable document is 502; " +
            "no usable base URL is 400 with `details.errorCode: \"base_url_missing\"`."
        )
      )
  )
  .annotate(
    OpenApi.Description,
    "HTTP connections: APIs described by OpenAPI documents, whose operations agents may call as tools."
  )
