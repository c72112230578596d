/**
 * A Streamable HTTP MCP server built with the SDK for run tests: `echo`
 * returns its text, `fail` answers with isError, and `wait` blocks until the
 * test opens the gate, so a run stays active as long as a test needs it.
 * It records the headers of every request it receives.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { Deferred, Effect, type Scope } from "effect"
import type { IncomingMessage } from "node:http"
import { z } from "zod"
import { sdkEndpoint } from "./McpServers.ts"

export interface GateServer {
  readonly url: string
  /** Headers of every request, in order. */
  readonly headers: () => ReadonlyArray<IncomingMessage["headers"]>
  /** Resolves when a `wait` call has arrived (the run is now blocked in it). */
  readonly waiting: Effect.Effect<void>
  /** Lets every pending and future `wait` call return. */
  readonly open: Effect.Effect<void>
}

export const gateServer: Effect.Effect<GateServer, never, Scope.Scope> = Effect.gen(function*() {
  const seen: Array<IncomingMessage["headers"]> = []
  const arrived = yield* Deferred.make<void>()
  const gate = yield* Deferred.make<void>()
  let released: (() => void) | undefined
  const opened = new Promise<void>((resolve) => (released = resolve))
  yield* Effect.addFinalizer(() => Effect.sync(() => released?.()))

  const port = yield* sdkEndpoint(
    () => {
      const server = new McpServer({ name: "gate", version: "1.0.0" })
      server.registerTool("echo", { description: "Echoes text.", inputSchema: { text: z.string() } }, ({ text }) => ({
        content: [{ type: "text", text }]
      }))
      server.registerTool("fail", { description: "Always fails." }, () => ({
        content: [{ type: "text", text: "it failed" }],
        isError: true
      }))
      server.registerTool("wait", { description: "Waits for the test." }, async () => {
        Effect.runFork(Deferred.succeed(arrived, undefined))
        await opened
        return { content: [{ type: "text", text: "gate opened" }] }
      })
      return server
    },
    (req) => {
      seen.push(req.headers)
      return false
    }
  )
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    headers: () => [...seen],
    waiting: Deferred.await(arrived),
    open: Effect.andThen(Deferred.succeed(gate, undefined), Effect.sync(() => released?.()))
  }
})
