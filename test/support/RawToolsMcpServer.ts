/**
 * A real MCP server (the SDK's, over stateless Streamable HTTP) that advertises
 * tools exactly as a test writes them, JSON Schemas and all (the SDK's
 * registerTool would build them from zod), and answers each call with the
 * result the test gave that tool: for hostile input and output schemas.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type Tool
} from "@modelcontextprotocol/sdk/types.js"
import { Effect, type Scope } from "effect"
import { type Running, sdkEndpoint } from "./McpServers.ts"

export interface RawTool {
  readonly tool: Tool
  readonly result: CallToolResult
}

export const rawToolsServer = (tools: ReadonlyArray<RawTool>): Effect.Effect<Running, never, Scope.Scope> =>
  Effect.map(
    sdkEndpoint(() => {
      const server = new McpServer({ name: "raw-tools", version: "1.0.0" }, { capabilities: { tools: {} } })
      server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.map((t) => t.tool) }))
      server.server.setRequestHandler(
        CallToolRequestSchema,
        (request) =>
          tools.find((t) => t.tool.name === request.params.name)?.result ??
            { content: [{ type: "text", text: "unknown tool" }], isError: true }
      )
      return server
    }),
    (port) => ({ url: `http://127.0.0.1:${port}/mcp` })
  )
