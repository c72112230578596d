/**
 * Oversized tool results archived through the agent's result handler (spec
 * 4.6 rule 5, 2.1.2 artifacts.oversizedToolResults, 6.1, 6.2), through the
 * whole service: a real MCP server's result over the server's resultCapBytes
 * is posted whole to a real handler (signed, every header, the body with its
 * sha256), the overflow chunk says `recovery: "remote-handler"` with the
 * handler's artifactId, and the model reads the preview and the artifact id,
 * never the whole result. A failed archive is reported on the overflow chunk
 * (`recovery: "none"` with the handler's error); a workspace takes precedence.
 */
import { assert } from "@effect/vitest"
import { Clock, Context, Effect, Fiber, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"
import { createHash } from "node:crypto"
import { IdGenerator } from "../../src/IdGenerator.ts"
import * as Collection from "../support/Collection.ts"
import {
  agentWithThread,
  callIdsOf,
  overflowsOf,
  send,
  startRun,
  streamOf,
  textOf,
  toolStep
} from "../support/Conversation.ts"
import { type GateServer, gateServer } from "../support/GateMcpServer.ts"
import * as HookServer from "../support/HookServer.ts"
import { toolReadsOf } from "../support/ModelReads.ts"
import { checkDispatch, createHandler, DispatchBody, receivedSince } from "../support/ResultHandlerDeliveries.ts"
import * as TestServer from "../support/TestServer.ts"

class Gate extends Context.Service<Gate, GateServer>()("test/ArchiveGate") {}

const Harness = Layer.mergeAll(
  TestServer.layerWithSql(),
  HookServer.HookServer.layer,
  Layer.effect(Gate)(gateServer)
)

const storyText = `${"once upon a time ".repeat(300)}the end`
const storyBytes = Buffer.byteLength(storyText)
const listText = JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ id: i, name: `item ${i}` })))

/** A thread of an agent with the gate server (cap 1,024 bytes, untrusted), `artifacts` and `workspace` as given. */
const threadWith = (agentBody: Record<string, unknown>) =>
  Effect.gen(function*() {
    const gate = yield* Gate
    const name = Collection.uniqueName("gate")
    const server = yield* Collection.toolServers.create({
      name,
      transport: "http",
      url: gate.url,
      resultCapBytes: 1_024
    })
    const { agent, thread } = yield* agentWithThread({
      capabilities: { mcp: { toolServerIds: [server.id] } },
      ...agentBody
    })
    return { agent, thread, tool: (t: string) => `mcp__${name}__${t}` }
  })

const archivingTo = (handlerId: string) => ({ artifacts: { oversizedToolResults: { resultHandlerId: handlerId } } })

/** Sends one echo of `text` and returns the run, its call id and overflow chunks, and the deliveries it made. */
const echo = (thread: { readonly id: string }, tool: (t: string) => string, text: string) =>
  Effect.gen(function*() {
    const before = (yield* (yield* HookServer.HookServer).received).length
    const sentAtMs = yield* Clock.currentTimeMillis
    const { runId, parsed } = yield* send(thread.id, toolStep(tool("echo"), { text }))
    const [id] = callIdsOf(parsed.chunks)
    return {
      runId,
      id,
      parsed,
      sentAtMs,
      overflows: overflowsOf(parsed.chunks),
      received: yield* receivedSince(before)
    }
  })

const failedNote = (why: string) => `[Only this preview is available: the full result could not be archived (${why}).]`

TestServer.suiteWith(Harness)("oversized tool results archived through a result handler", (it) => {
  it.effect("the whole result goes to the handler, signed; the chunk names its artifact; the model reads the preview and the artifact id", () =>
    Effect.gen(function*() {
      const server = yield* HookServer.HookServer
      const ids = yield* IdGenerator
      const { handler, secret, path } = yield* createHandler()
      yield* server.answerWith(
        HookServer.reply(200, { artifactId: "arch-1", url: "https://files.example.com/arch-1", block: "[[arch-1]]" })
      )
      const { agent, thread, tool } = yield* threadWith(archivingTo(handler.id))
      const { runId, id, parsed, sentAtMs, overflows, received } = yield* echo(thread, tool, storyText)

      assert.strictEqual(received.length, 1)
      const body = yield* checkDispatch(received[0], {
        path,
        secret,
        sentAtMs,
        requestId: ids.derive("request", `${runId}:${id}:overflow`),
        organizationId: "org_acme",
        agentId: agent.id,
        runId,
        handlerId: handler.id
      })
      assert.deepStrictEqual(body, {
        runId,
        threadId: thread.id,
        agentId: agent.id,
        toolName: tool("echo"),
        toolCallId: id,
        stepNumber: 1,
        mediaType: "text/plain",
        bytes: storyBytes,
        sha256: createHash("sha256").update(storyText).digest("hex"),
        content: storyText
      })

      assert.deepStrictEqual(overflows, [{
        toolCallId: id,
        toolName: tool("echo"),
        bytes: storyBytes,
        capBytes: 1_024,
        recovery: "remote-handler",
        resultHandlerId: handler.id,
        artifactId: "arch-1",
        url: "https://files.example.com/arch-1"
      }])
      // The overflow is announced while the call runs, before its output.
      const callChunks = parsed.chunks.filter((c) =>
        "toolCallId" in c || ("data" in c && c.type === "data-svc-tool-result-overflow")
      )
      assert.deepStrictEqual(callChunks.map((c) => c.type), [
        "tool-input-start",
        "tool-input-available",
        "data-svc-tool-result-overflow",
        "tool-output-available"
      ])

      // The model read the head in the envelope, then the service's note; never the whole result.
      const archived = `[The full result (${storyBytes} bytes) was archived by the agent's result handler ` +
        "as artifact \"arch-1\"; it is not available in this conversation: only this preview is.]"
      const [read] = yield* toolReadsOf(runId)
      assert.isTrue(read.startsWith(`<untrusted_data source="${tool("echo")}">\nonce upon a time`), read)
      assert.isTrue(read.endsWith(`only the first 1024 bytes are shown.]\n</untrusted_data>\n${archived}`), read)
      assert.notInclude(read, "the end")
      // The scripted model's answer quotes what it read, without the envelope.
      const answer = textOf(parsed.message)
      assert.isTrue(answer.startsWith("Result: once upon a time"), answer)
      assert.isTrue(answer.endsWith(`only the first 1024 bytes are shown.]\n${archived}`), answer)

      // A result within the cap is not archived.
      const small = yield* echo(thread, tool, "short")
      assert.deepStrictEqual([small.overflows, small.received], [[], []])
    }))

  it.effect("a JSON result goes as application/json, its text as it was; the model reads the list's digest", () =>
    Effect.gen(function*() {
      const server = yield* HookServer.HookServer
      const { handler } = yield* createHandler()
      yield* server.answerWith(HookServer.reply(200, { artifactId: "arch-list" }))
      const { thread, tool } = yield* threadWith(archivingTo(handler.id))
      const { parsed, overflows, received } = yield* echo(thread, tool, listText)
      const body = yield* Schema.decodeUnknownEffect(DispatchBody)(TestServer.parseJson(received[0].body)).pipe(
        Effect.orDie
      )
      assert.deepStrictEqual([body.mediaType, body.content, body.bytes], [
        "application/json",
        listText,
        Buffer.byteLength(listText)
      ])
      assert.strictEqual((overflows[0] as Record<string, unknown>)["artifactId"], "arch-list")
      assert.include(textOf(parsed.message), "{\"total\":200,\"shown\":")
      assert.notInclude(textOf(parsed.message), "item 199")
    }))

  it.effect("a failed archive is reported on the overflow chunk (recovery none, the handler's error) and the model reads only the preview", () =>
    Effect.gen(function*() {
      const server = yield* HookServer.HookServer
      const { handler } = yield* createHandler()
      const { thread, tool } = yield* threadWith(archivingTo(handler.id))
      const cases = [
        {
          answer: HookServer.reply(503, { error: "busy" }),
          reason: "status",
          code: "service_unavailable",
          why: "the result handler answered with an error status"
        },
        {
          answer: HookServer.replyText(200, "ok"),
          reason: "invalid_response",
          code: "result_handler_response_invalid",
          why: "the result handler's answer was invalid"
        },
        {
          answer: HookServer.reply(200, { url: "https://files.example.com/x" }),
          reason: "invalid_response",
          code: "result_handler_response_invalid",
          why: "the result handler's answer was invalid"
        }
      ] as const
      for (const c of cases) {
        yield* server.answerWith(c.answer)
        const { runId, id, parsed, overflows, received } = yield* echo(thread, tool, storyText)
        assert.strictEqual(received.length, 1)
        const [overflow] = overflows as [Record<string, unknown>]
        const error = overflow["error"] as { code: string; reason: string; message: string }
        assert.deepStrictEqual(overflow, {
          toolCallId: id,
          toolName: tool("echo"),
          bytes: storyBytes,
          capBytes: 1_024,
          recovery: "none",
          resultHandlerId: handler.id,
          message: error.message,
          error: { code: c.code, reason: c.reason, message: error.message }
        })
        assert.match(error.message, new RegExp(`^Result handler ${handler.id}: .+\\.$`))
        const [read] = yield* toolReadsOf(runId)
        assert.isTrue(read.endsWith(`</untrusted_data>\n${failedNote(c.why)}`), read)
        assert.isTrue(textOf(parsed.message).endsWith(`shown.]\n${failedNote(c.why)}`), textOf(parsed.message))
      }
    }))

  it.effect("a handler slower than its requestTimeoutMs fails the archive once the timeout passes on TestClock", () =>
    Effect.gen(function*() {
      const server = yield* HookServer.HookServer
      const { handler } = yield* createHandler({ requestTimeoutMs: 5_000 })
      const { thread, tool } = yield* threadWith(archivingTo(handler.id))
      yield* server.answerWith(HookServer.hold)
      const before = (yield* server.received).length
      const result = yield* Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(send(thread.id, toolStep(tool("echo"), { text: storyText })))
        yield* server.awaitRequest(before + 1)
        yield* TestClock.adjust("5 seconds")
        return yield* Fiber.join(fiber)
      }).pipe(Effect.ensuring(server.releaseHeld))
      const [overflow] = overflowsOf(result.parsed.chunks) as [Record<string, unknown>]
      assert.deepStrictEqual(overflow["error"], {
        code: "service_unavailable",
        reason: "timeout",
        message: `Result handler ${handler.id}: no response within 5000 ms.`
      })
      assert.isTrue(textOf(result.parsed.message).endsWith(failedNote("the result handler did not answer in time")))
    }))

  it.effect("a handler deleted while the run was under way is result_handler_not_found on the chunk", () =>
    Effect.gen(function*() {
      const gate = yield* Gate
      const { handler } = yield* createHandler()
      const { agent, thread, tool } = yield* threadWith(archivingTo(handler.id))
      const receipt = yield* startRun(thread.id, {
        input: [toolStep(tool("wait")), toolStep(tool("echo"), { text: storyText })].join("\n")
      })
      yield* gate.waiting
      // The run captured the handler at its start; the agent lets go of it and it is deleted.
      yield* Collection.agents.update(agent.id, { artifacts: null })
      assert.strictEqual((yield* Collection.resultHandlers.del(handler.id)).status, 200)
      yield* gate.open
      const { chunks } = yield* streamOf(receipt.runId)
      const [overflow] = overflowsOf(chunks) as [Record<string, unknown>]
      assert.deepStrictEqual(overflow["error"], {
        code: "result_handler_not_found",
        reason: "not_found",
        message: `Result handler ${handler.id}: no such result handler in this workspace (it was deleted).`
      })
      assert.strictEqual(overflow["recovery"], "none")
    }))

  it.effect("with a managed workspace the result is kept there and the handler is not called", () =>
    Effect.gen(function*() {
      const { handler } = yield* createHandler()
      const { thread, tool } = yield* threadWith({
        ...archivingTo(handler.id),
        workspace: { type: "managed", network: { mode: "offline" } }
      })
      const { id, overflows, received } = yield* echo(thread, tool, storyText)
      assert.deepStrictEqual(received, [])
      assert.deepStrictEqual(overflows, [{
        toolCallId: id,
        toolName: tool("echo"),
        bytes: storyBytes,
        capBytes: 1_024,
        recovery: "workspace",
        path: `.svc/artifacts/${id}.txt`
      }])
    }))
})
