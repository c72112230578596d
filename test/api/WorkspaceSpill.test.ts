/**
 * Oversized tool results with a managed workspace (spec 4.6 rule 5, 6.2),
 * through the whole service on the real sandbox: a real MCP server's result
 * over the server's resultCapBytes is kept whole in the workspace's
 * `.svc/artifacts/`, the overflow chunk says `recovery: "workspace"` with the
 * path, the model reads the preview (a list's digest, else the head) plus a
 * hint naming the file and the file tools, and the file tools read it back.
 * A result that cannot be kept, or a run without a workspace, stays
 * `recovery: "none"`.
 */
import { assert, layer } from "@effect/vitest"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { Context, Effect, Layer } from "effect"
import * as Collection from "../support/Collection.ts"
import { agentWithThread, callIdsOf, outputsOf, overflowsOf, send, textOf, toolStep } from "../support/Conversation.ts"
import { sdkEndpoint } from "../support/McpServers.ts"
import { toolReadsOf } from "../support/ModelReads.ts"
import * as TestServer from "../support/TestServer.ts"

/** 200 items: about 6 KB of JSON, over a 1,024-byte cap. */
const items = Array.from({ length: 200 }, (_, i) => ({ id: i, name: `item ${i}`, big: 12345678901234567890 }))
/** The list as the server sends it: a number beyond double precision, kept literally in the file. */
const listText = JSON.stringify(items).replaceAll("12345678901234567000", "12345678901234567890")
const storyText = `${"once upon a time ".repeat(300)}the end`

class Mcp extends Context.Service<Mcp, { readonly url: string }>()("test/SpillMcp") {}

const Harness = Layer.merge(
  TestServer.layerWithSql(),
  Layer.effect(Mcp)(
    Effect.map(
      sdkEndpoint(() => {
        const server = new McpServer({ name: "spill-test", version: "1.0.0" })
        server.registerTool(
          "list",
          { description: "a long list" },
          () => ({ content: [{ type: "text", text: listText }] })
        )
        server.registerTool(
          "story",
          { description: "a long text" },
          () => ({ content: [{ type: "text", text: storyText }] })
        )
        return server
      }),
      (port) => ({ url: `http://127.0.0.1:${port}/mcp` })
    )
  )
)

/** A thread of an agent with the spill-test server (cap 1,024 bytes, untrusted) and `workspace` (none when undefined). */
const threadWith = (workspace: unknown) =>
  Effect.gen(function*() {
    const { url } = yield* Mcp
    const name = Collection.uniqueName("spill")
    const server = yield* Collection.toolServers.create({ name, transport: "http", url, resultCapBytes: 1_024 })
    const { thread } = yield* agentWithThread({
      capabilities: { mcp: { toolServerIds: [server.id] } },
      ...(workspace === undefined ? {} : { workspace })
    })
    return { thread, tool: (t: string) => `mcp__${name}__${t}` }
  })

const offline = { type: "managed", network: { mode: "offline" } }

layer(Harness, { timeout: TestServer.setupTimeout })("oversized tool results with a workspace", (it) => {
  it.effect("a list over the cap is kept whole in .svc/artifacts/<id>.json; the model reads the digest and the hint; read_file reads it back", () =>
    Effect.gen(function*() {
      const { thread, tool } = yield* threadWith(offline)
      const { runId, parsed } = yield* send(thread.id, toolStep(tool("list")))
      const [id] = callIdsOf(parsed.chunks)
      const path = `.svc/artifacts/${id}.json`
      const bytes = Buffer.byteLength(listText)
      assert.deepStrictEqual(overflowsOf(parsed.chunks), [
        { toolCallId: id, toolName: tool("list"), bytes, capBytes: 1_024, recovery: "workspace", path }
      ])
      // The stream shows the digest; the model read it in the envelope, then the service's hint outside it.
      const digest = outputsOf(parsed.chunks)[0] as { total: number; shown: number; items: ReadonlyArray<unknown> }
      assert.strictEqual(digest.total, 200)
      const hint =
        `[The full result (${bytes} bytes, JSON laid out one value per line) is in the workspace at ${path}; ` +
        "read it with read_file (offset and limit page through it), grep or glob.]"
      const [modelRead] = yield* toolReadsOf(runId)
      assert.isTrue(
        modelRead.startsWith(`<untrusted_data source="${tool("list")}">\n{"total":200,"shown":${digest.shown},`),
        modelRead
      )
      assert.isTrue(modelRead.endsWith(`</untrusted_data>\n${hint}`), modelRead)
      // The scripted model's answer quotes what it read, without the envelope.
      const answer = textOf(parsed.message)
      assert.isTrue(answer.startsWith(`Result: {"total":200,"shown":${digest.shown},`), answer)
      assert.isTrue(answer.endsWith(`of 200 items.]\n${hint}`), answer)

      // The next run reads the whole result back with the file tools.
      const next = yield* send(
        thread.id,
        [toolStep("read_file", { path, limit: 5_000 }), toolStep("grep", { pattern: "item 199", path: ".svc" })].join(
          "\n"
        )
      )
      const [read, found] = outputsOf(next.parsed.chunks) as [
        { content: string; totalLines: number },
        { matches: ReadonlyArray<{ path: string }> }
      ]
      assert.strictEqual(
        read.content,
        JSON.stringify(items, null, 2).replaceAll("12345678901234567000", "12345678901234567890") + "\n"
      )
      assert.deepStrictEqual(found.matches.map((m) => m.path), [path])
    }))

  it.effect("a text over the cap is kept whole as <id>.txt; the model reads its head and the hint", () =>
    Effect.gen(function*() {
      const { thread, tool } = yield* threadWith({ ...offline, shell: true })
      const { parsed } = yield* send(thread.id, toolStep(tool("story")))
      const [id] = callIdsOf(parsed.chunks)
      const path = `.svc/artifacts/${id}.txt`
      assert.deepStrictEqual(overflowsOf(parsed.chunks), [
        {
          toolCallId: id,
          toolName: tool("story"),
          bytes: Buffer.byteLength(storyText),
          capBytes: 1_024,
          recovery: "workspace",
          path
        }
      ])
      assert.include(textOf(parsed.message), "only the first 1024 bytes are shown.]")
      assert.include(textOf(parsed.message), `is in the workspace at ${path}; read it with read_file`)
      const next = yield* send(thread.id, toolStep("bash", { command: `cat ${path}` }))
      assert.deepStrictEqual(outputsOf(next.parsed.chunks), [{ exitCode: 0, stdout: storyText, stderr: "" }])
    }))

  it.effect("a result the workspace cannot keep stays recovery none, and the chunk and the model say why", () =>
    Effect.gen(function*() {
      const { thread, tool } = yield* threadWith({ ...offline, shell: true })
      // .svc is a file: the artifacts directory cannot be made.
      const { parsed } = yield* send(
        thread.id,
        [toolStep("bash", { command: "touch .svc" }), toolStep(tool("story"))].join("\n")
      )
      const [, id] = callIdsOf(parsed.chunks)
      const [overflow] = overflowsOf(parsed.chunks) as [Record<string, unknown>]
      assert.deepStrictEqual(
        { ...overflow, message: undefined },
        {
          toolCallId: id,
          toolName: tool("story"),
          bytes: Buffer.byteLength(storyText),
          capBytes: 1_024,
          recovery: "none",
          message: undefined
        }
      )
      assert.match(String(overflow["message"]), /^the full result could not be kept in the workspace: .+/)
      assert.include(textOf(parsed.message), `[Only this preview is available: ${String(overflow["message"])}.]`)
    }))

  it.effect("without a workspace an over-cap result stays recovery none, with no hint", () =>
    Effect.gen(function*() {
      const { thread, tool } = yield* threadWith(undefined)
      const { runId, parsed } = yield* send(thread.id, toolStep(tool("story")))
      const [id] = callIdsOf(parsed.chunks)
      assert.deepStrictEqual(overflowsOf(parsed.chunks), [
        {
          toolCallId: id,
          toolName: tool("story"),
          bytes: Buffer.byteLength(storyText),
          capBytes: 1_024,
          recovery: "none"
        }
      ])
      const [modelRead] = yield* toolReadsOf(runId)
      assert.isTrue(modelRead.endsWith("only the first 1024 bytes are shown.]\n</untrusted_data>"), modelRead)
      assert.isTrue(textOf(parsed.message).endsWith("only the first 1024 bytes are shown.]"), textOf(parsed.message))
    }))
})
