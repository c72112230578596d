/**
 * The chaos run's MCP server (Streamable HTTP, built with the SDK): `work`
 * waits `ms` milliseconds and answers its `key`; `gated` does the same, and
 * its tool server makes every call of it wait for an approval. The load gives
 * each tool call a key of its own, so the server counts executions per tool
 * call, with when each began and which run sent it.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { Effect, type Scope } from "effect"
import { z } from "zod"
import { sdkEndpoint } from "../../test/support/McpServers.ts"

export interface ToolCall {
  readonly key: string
  readonly tool: string
  readonly runId: string
  /** Epoch ms when the call arrived. */
  readonly at: number
}

export interface ChaosToolServer {
  readonly url: string
  /** Every call received, in arrival order. */
  readonly calls: () => ReadonlyArray<ToolCall>
}

export const chaosToolServer: Effect.Effect<ChaosToolServer, never, Scope.Scope> = Effect.gen(function*() {
  const calls: Array<ToolCall> = []
  const input = { key: z.string(), ms: z.number().int().min(0).max(10_000) }
  const handler =
    (tool: string) =>
    async ({ key, ms }: { key: string; ms: number }, extra: { requestInfo?: { headers: Record<string, unknown> } }) => {
      const header = extra.requestInfo?.headers["svc-run-id"]
      calls.push({ key, tool, runId: typeof header === "string" ? header : "", at: Date.now() })
      await new Promise((resolve) => setTimeout(resolve, ms))
      return { content: [{ type: "text" as const, text: `done ${key}` }] }
    }
  const port = yield* sdkEndpoint(() => {
    const server = new McpServer({ name: "chaos", version: "1.0.0" })
    server.registerTool("work", { description: "Works for ms milliseconds.", inputSchema: input }, handler("work"))
    server.registerTool(
      "gated",
      { description: "Works for ms milliseconds, once approved.", inputSchema: input },
      handler("gated")
    )
    return server
  })
  return { url: `http://127.0.0.1:${port}/mcp`, calls: () => [...calls] }
})
