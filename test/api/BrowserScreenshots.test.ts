/**
 * Browser screenshots through the whole service (spec 2.1.2, 6.1) on real
 * Chromium in the real sandbox: an agent with `capabilities.browser` and a
 * managed workspace takes a screenshot; with
 * `exports.include.browserScreenshots: true` it is dispatched to the export
 * handler (signed and verified, base64 PNG) and the model reads the handler's
 * ref; without the flag nothing is sent and the model reads the native
 * `{ kind: 'svc', id }` handle of the stored artifact.
 */
import { assert } from "@effect/vitest"
import { Clock, Effect, Layer } from "effect"
import { IdGenerator } from "../../src/IdGenerator.ts"
import { agentWithThread, callIdsOf, outputsOf, send, toolStep } from "../support/Conversation.ts"
import * as HookServer from "../support/HookServer.ts"
import { checkDispatch, createHandler, receivedSince } from "../support/ResultHandlerDeliveries.ts"
import * as TestServer from "../support/TestServer.ts"

const Harness = Layer.mergeAll(TestServer.layer(), HookServer.HookServer.layer)

const workspace = { type: "managed", network: { mode: "offline" } }
const pngMagic = Buffer.from([0x89, 0x50, 0x4e, 0x47]).toString("base64").slice(0, 4)

TestServer.suiteWith(Harness)("browser screenshots", (it) => {
  it.effect(
    "with browserScreenshots: one signed dispatch of the PNG, and the model reads the handler's ref",
    () =>
      Effect.gen(function*() {
        const server = yield* HookServer.HookServer
        const ids = yield* IdGenerator
        const { handler, path, secret } = yield* createHandler()
        yield* server.answerWith(HookServer.reply(200, { artifactId: "shot-1", ref: { kind: "drive", id: "d-9" } }))
        const { agent, thread } = yield* agentWithThread({
          workspace,
          capabilities: { browser: true },
          artifacts: { exports: { resultHandlerId: handler.id, include: { browserScreenshots: true } } }
        })
        const before = (yield* server.received).length
        const sentAtMs = yield* Clock.currentTimeMillis
        const { parsed, runId } = yield* send(thread.id, toolStep("browser_take_screenshot", {}))
        const [id] = callIdsOf(parsed.chunks)
        const received = yield* receivedSince(before)
        assert.strictEqual(received.length, 1)
        const body = yield* checkDispatch(received[0], {
          path,
          secret,
          sentAtMs,
          requestId: ids.derive("request", `${runId}:${id}:export`),
          organizationId: "org_acme",
          agentId: agent.id,
          runId,
          handlerId: handler.id
        })
        assert.strictEqual(body.toolName, "browser_take_screenshot")
        assert.strictEqual(body.mediaType, "image/png")
        const content = body.content as { kind: string; base64: string; mimeType: string }
        assert.strictEqual(content.kind, "base64")
        assert.strictEqual(content.mimeType, "image/png")
        assert.strictEqual(content.base64.slice(0, 4), pngMagic)
        const output = outputsOf(parsed.chunks)[0] as { export: unknown; artifact: unknown; pageUrl: string }
        assert.strictEqual(output.pageUrl, "about:blank")
        assert.deepStrictEqual(output.export, { artifactId: "shot-1" })
        assert.deepStrictEqual(output.artifact, { ref: { kind: "drive", id: "d-9" } })
      }),
    180_000
  )

  it.effect(
    "without the flag: nothing is sent; the screenshot is a stored artifact the model reads as the svc handle",
    () =>
      Effect.gen(function*() {
        const server = yield* HookServer.HookServer
        const { handler } = yield* createHandler()
        const { thread } = yield* agentWithThread({
          workspace,
          capabilities: { browser: true },
          artifacts: { exports: { resultHandlerId: handler.id } }
        })
        const before = (yield* server.received).length
        const { parsed } = yield* send(thread.id, toolStep("browser_take_screenshot", {}))
        assert.deepStrictEqual(yield* receivedSince(before), [])
        const output = outputsOf(parsed.chunks)[0] as { svcArtifactId: string; artifact: unknown }
        assert.match(output.svcArtifactId, /^art_/)
        assert.deepStrictEqual(output.artifact, { ref: { kind: "svc", id: output.svcArtifactId } })
        const stored = yield* TestServer.request("GET", `/v1/artifacts/${output.svcArtifactId}`)
        assert.strictEqual(stored.status, 200)
      }),
    180_000
  )
})
