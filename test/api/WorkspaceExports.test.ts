/**
 * workspace_export_artifact (spec 2.1.2, 4.5, 6.1), through the whole
 * service on the real sandbox: a workspace file becomes an export artifact;
 * with `artifacts.exports.resultHandlerId` it is delivered to a real handler
 * (signed, every header, base64 content, or a url transfer handle served by
 * this service above 1 MiB) and the model reads the handler's durable answer;
 * without one, the native `{ kind: 'svc', id }` handle, and with
 * `include-svc-signed` a signed URL that works without a key. A handler that
 * fails is a tool error the model reads.
 */
import { assert } from "@effect/vitest"
import { Clock, Effect, Layer, Schema } from "effect"
import { createHash } from "node:crypto"
import { IdGenerator } from "../../src/IdGenerator.ts"
import {
  agentWithThread,
  bashStep,
  callIdsOf,
  failureTextsOf,
  outputsOf,
  send,
  toolStep
} from "../support/Conversation.ts"
import * as HookServer from "../support/HookServer.ts"
import { checkDispatch, createHandler, receivedSince } from "../support/ResultHandlerDeliveries.ts"
import * as TestServer from "../support/TestServer.ts"
import * as Uploads from "../support/Uploads.ts"

const Harness = Layer.mergeAll(TestServer.layer(), HookServer.HookServer.layer)

const workspace = { type: "managed", shell: true, network: { mode: "offline" } }
const report = "quarterly numbers: up\n"
const sha = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex")

/** Writes `out/report.txt`, then exports it: the run, the export call's id and outputs, and the deliveries made. */
const writeAndExport = (
  threadId: string,
  setup = toolStep("write_file", { path: "out/report.txt", content: report }),
  path = "out/report.txt"
) =>
  Effect.gen(function*() {
    const before = (yield* (yield* HookServer.HookServer).received).length
    const sentAtMs = yield* Clock.currentTimeMillis
    const { runId, parsed } = yield* send(threadId, [setup, toolStep("workspace_export_artifact", { path })].join("\n"))
    const ids = callIdsOf(parsed.chunks)
    return {
      runId,
      id: ids[1],
      parsed,
      sentAtMs,
      output: outputsOf(parsed.chunks)[1],
      received: yield* receivedSince(before)
    }
  })

/** The path and query of a URL this service signed (the test server is not at its public URL). */
const local = (url: string) => {
  const u = new URL(url)
  return `${u.pathname}${u.search}`
}

/** The tool errors of a stream, as `code: message`. */
const errorTextsOf = failureTextsOf

const SvcArtifact = Schema.Struct({
  artifact: Schema.Struct({
    ref: Schema.Struct({ kind: Schema.Literal("svc"), id: Schema.String }),
    url: Schema.optionalKey(Schema.String)
  })
})

TestServer.suiteWith(Harness)("workspace exports", (it) => {
  it.effect("with an export handler: one signed dispatch of the file (base64), and the model reads the handler's durable answer", () =>
    Effect.gen(function*() {
      const server = yield* HookServer.HookServer
      const ids = yield* IdGenerator
      const { handler, secret, path } = yield* createHandler()
      yield* server.answerWith(HookServer.reply(200, {
        artifactId: "exp-1",
        url: "https://files.example.com/exp-1",
        ref: { kind: "drive", id: "d-1", block: "[[exp-1]]" }
      }))
      const { agent, thread } = yield* agentWithThread({
        workspace,
        artifacts: { exports: { resultHandlerId: handler.id } }
      })
      const { runId, id, sentAtMs, output, received } = yield* writeAndExport(thread.id)

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
      assert.deepStrictEqual(body, {
        runId,
        threadId: thread.id,
        agentId: agent.id,
        toolName: "workspace_export_artifact",
        toolCallId: id,
        stepNumber: 2,
        mediaType: "text/plain",
        bytes: report.length,
        sha256: sha(report),
        content: { kind: "base64", base64: Buffer.from(report).toString("base64"), mimeType: "text/plain" }
      })
      assert.deepStrictEqual(output, {
        path: "out/report.txt",
        filename: "report.txt",
        mediaType: "text/plain",
        bytes: report.length,
        sha256: sha(report),
        export: { artifactId: "exp-1", url: "https://files.example.com/exp-1" },
        artifact: { ref: { kind: "drive", id: "d-1", block: "[[exp-1]]" }, block: "[[exp-1]]" }
      })
    }))

  it.effect("a file over 1 MiB goes as a url transfer handle this service serves, with its svcArtifactId", () =>
    Effect.gen(function*() {
      const server = yield* HookServer.HookServer
      const { handler } = yield* createHandler()
      yield* server.answerWith(HookServer.reply(200, { url: "https://files.example.com/big" }))
      const { thread } = yield* agentWithThread({ workspace, artifacts: { exports: { resultHandlerId: handler.id } } })
      const { output, received } = yield* writeAndExport(
        thread.id,
        bashStep("head -c 1100000 /dev/urandom > big.bin"),
        "big.bin"
      )
      const body = Schema.decodeUnknownSync(Schema.Struct({
        bytes: Schema.Number,
        sha256: Schema.String,
        mediaType: Schema.String,
        content: Schema.Struct({
          kind: Schema.Literal("url"),
          url: Schema.String,
          mimeType: Schema.String,
          svcArtifactId: Schema.String
        })
      }))(TestServer.parseJson(received[0].body))
      assert.strictEqual(body.bytes, 1_100_000)
      assert.strictEqual(body.mediaType, "application/octet-stream")
      assert.strictEqual(body.content.mimeType, "application/octet-stream")
      assert.match(body.content.svcArtifactId, /^art_/)
      // The handler fetches the bytes from the signed URL, without an API key.
      const fetched = yield* Uploads.download(local(body.content.url), null)
      assert.strictEqual(fetched.status, 200)
      assert.strictEqual(sha(fetched.bytes), body.sha256)
      // No ref from the handler: the model gets the id-only transfer handle beside the durable URL.
      assert.deepStrictEqual(output, {
        path: "big.bin",
        filename: "big.bin",
        mediaType: "application/octet-stream",
        bytes: 1_100_000,
        sha256: body.sha256,
        export: { url: "https://files.example.com/big" },
        artifact: { ref: { kind: "svc", id: body.content.svcArtifactId } }
      })
    }))

  it.effect("without a handler (or with workspace exports excluded): the svc handle, whose bytes GET /v1/artifacts/:id serves; nothing is sent", () =>
    Effect.gen(function*() {
      const { handler } = yield* createHandler()
      for (
        const artifacts of [undefined, {
          exports: { resultHandlerId: handler.id, include: { workspaceExports: false } }
        }]
      ) {
        const { thread } = yield* agentWithThread({ workspace, ...(artifacts === undefined ? {} : { artifacts }) })
        const { output, received } = yield* writeAndExport(thread.id)
        assert.strictEqual(received.length, 0)
        const { artifact } = Schema.decodeUnknownSync(SvcArtifact)(output)
        assert.isUndefined(artifact.url)
        const served = yield* Uploads.download(`/v1/artifacts/${artifact.ref.id}`)
        assert.strictEqual(served.status, 200)
        assert.strictEqual(new TextDecoder().decode(served.bytes), report)
        assert.strictEqual(served.headers.get("content-type"), "text/plain")
        assert.strictEqual((yield* Uploads.download(`/v1/artifacts/${artifact.ref.id}`, TestServer.Keys.b)).status, 403)
      }
    }))

  it.effect("stream.urls 'include-svc-signed' puts a signed URL in the result; it serves the bytes without a key", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({ workspace, artifacts: { stream: { urls: "include-svc-signed" } } })
      const { output } = yield* writeAndExport(thread.id)
      const { artifact } = Schema.decodeUnknownSync(SvcArtifact)(output)
      assert.match(
        artifact.url ?? "",
        new RegExp(`^http://svc\\.test/v1/artifacts/${artifact.ref.id}/download\\?expires=\\d+&signature=`)
      )
      const served = yield* Uploads.download(local(artifact.url ?? ""), null)
      assert.strictEqual(served.status, 200)
      assert.strictEqual(new TextDecoder().decode(served.bytes), report)
    }))

  it.effect("a handler that fails, or a file that is not there, is a tool error the model reads; the run goes on", () =>
    Effect.gen(function*() {
      const server = yield* HookServer.HookServer
      const { handler } = yield* createHandler()
      yield* server.answerWith(HookServer.reply(200, { ref: { block: "[[no locator]]" } }))
      const { thread } = yield* agentWithThread({ workspace, artifacts: { exports: { resultHandlerId: handler.id } } })
      const { parsed, received } = yield* writeAndExport(thread.id)
      assert.strictEqual(received.length, 1)
      const [invalid] = errorTextsOf(parsed.chunks)
      assert.isTrue(
        invalid.startsWith(
          "result_handler_response_invalid: the export could not be delivered to the agent's artifact handler: "
        ),
        invalid
      )
      assert.strictEqual(parsed.message?.role, "assistant")
      const missing = yield* writeAndExport(thread.id, bashStep("true"), "nope.txt")
      assert.strictEqual(missing.received.length, 0)
      assert.deepStrictEqual(errorTextsOf(missing.parsed.chunks), ["workspace_error: no such file: nope.txt"])
    }))
})
