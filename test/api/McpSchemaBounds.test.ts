/**
 * Schemas an MCP server advertises, as a hostile tenant's server writes them,
 * from a real SDK server: a tool whose input schema is nested past the bound is
 * not offered (an `error` chunk says so, a call is the tool error
 * `tool_schema_refused`, the run goes on); a `$defs` fan-out is offered as it
 * is, never expanded; structured content is validated against the tool's
 * outputSchema in linear time (5,000 `a`s and a `!` against `^(a+)+$`, which
 * the SDK's own validator would have run on the serving thread for ever) and a
 * pattern RE2 cannot run is a tool error, while another organization is served.
 */
import { assert } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { SchemaLimits } from "../../src/tools/SchemaBudget.ts"
import * as Collection from "../support/Collection.ts"
import {
  agentWithThread,
  failureTextsOf,
  getRun,
  startRun,
  streamOf,
  successesOf,
  textOf
} from "../support/Conversation.ts"
import { rawToolsServer } from "../support/RawToolsMcpServer.ts"
import { backtracking, fanOutJsonSchema } from "../support/SchemaBombs.ts"
import * as TestServer from "../support/TestServer.ts"

const nested = (levels: number): Record<string, unknown> => {
  let schema: Record<string, unknown> = { type: "string" }
  for (let i = 0; i < levels; i++) schema = { type: "object", properties: { a: schema } }
  return schema
}

const text = (t: string) => ({ content: [{ type: "text" as const, text: t }] })
const withPattern = (pattern: string) => ({
  type: "object" as const,
  properties: { s: { type: "string", pattern } },
  required: ["s"]
})
const fanOut = { type: "object" as const, ...fanOutJsonSchema(8) }

const decodeTools = Schema.decodeUnknownSync(
  Schema.fromJsonString(Schema.Array(Schema.Struct({ name: Schema.String, inputSchema: Schema.Unknown })))
)

TestServer.suite()("MCP schema bounds", (it) => {
  it.effect("an input schema past the bound is not offered and its call is a tool error; outputs are validated in linear time", () =>
    Effect.gen(function*() {
      const server = yield* rawToolsServer([
        {
          tool: { name: "deep", inputSchema: { type: "object", properties: { a: nested(SchemaLimits.maxDepth / 2) } } },
          result: text("deep")
        },
        { tool: { name: "fanout", inputSchema: fanOut }, result: text("fanout") },
        {
          tool: { name: "backtrack", inputSchema: { type: "object" }, outputSchema: withPattern(backtracking.pattern) },
          result: { ...text("s"), structuredContent: { s: backtracking.input(5_000) } }
        },
        {
          tool: { name: "lookahead", inputSchema: { type: "object" }, outputSchema: withPattern("^(?=a)a+$") },
          result: { ...text("s"), structuredContent: { s: "aaa" } }
        },
        {
          tool: { name: "fine", inputSchema: { type: "object" }, outputSchema: withPattern(backtracking.pattern) },
          result: { ...text("s"), structuredContent: { s: "aaa" } }
        }
      ])
      const registered = yield* Collection.toolServers.create({
        name: "raw",
        transport: "http",
        url: server.url,
        defer: false
      })
      const { thread } = yield* agentWithThread({ capabilities: { mcp: { toolServerIds: [registered.id] } } })
      const calls = ["deep", "backtrack", "lookahead", "fine"].map((name) => ({ name: `mcp__raw__${name}`, input: {} }))
      const receipt = yield* startRun(thread.id, { input: `/tools ${JSON.stringify(calls)}\n/show-tools` })
      // While the run validates, another organization is served.
      const other = yield* TestServer.request("GET", "/v1/agents", { key: TestServer.Keys.c })
      assert.strictEqual(other.status, 200)
      const { chunks, message } = yield* streamOf(receipt.runId)
      const refused = `its input schema is nested deeper than ${SchemaLimits.maxDepth} levels`
      assert.deepStrictEqual(
        chunks.flatMap((c) => (c.type === "error" ? [c.errorText] : [])),
        [`Tool 'mcp__raw__deep' of server 'raw' is not offered: ${refused}.`]
      )
      assert.deepStrictEqual(failureTextsOf(chunks).map((t) => t.replace(/: error parsing regexp.*/, "")), [
        `tool_schema_refused: tool 'mcp__raw__deep' is not offered: ${refused}.`,
        `tool_server_error: Structured content does not match the tool's output schema: data/s must match pattern "${backtracking.pattern}"`,
        "tool_server_error: The tool's output schema has a pattern the linear-time engine cannot run (RE2: no backreferences, lookahead or lookbehind)"
      ])
      assert.deepStrictEqual(successesOf(chunks), [{ s: "aaa" }])
      // The fan-out is offered as the server wrote it: its $refs are the model's to read, not expanded here.
      const offered = decodeTools(textOf(message))
      assert.deepStrictEqual(offered.map((t) => t.name), [
        "mcp__raw__fanout",
        "mcp__raw__backtrack",
        "mcp__raw__lookahead",
        "mcp__raw__fine"
      ])
      assert.deepStrictEqual(offered[0]?.inputSchema, fanOut)
      assert.strictEqual((yield* getRun(receipt.runId)).status, "completed")
    }).pipe(Effect.scoped))
})
