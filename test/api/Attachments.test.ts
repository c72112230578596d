/**
 * Attachments end to end (spec 4.3 rule 1): files uploaded with the Files API
 * and attached to a run reach the model as the provider's native parts
 * (OpenAI-compatible and Anthropic routes on aimock, read from a recording
 * proxy), each as a run-scoped artifact named in the manifest whose bytes
 * GET /v1/artifacts/:id serves; later turns of the thread send them again;
 * bad items refuse the run with a 400 naming the item.
 */
import { assert } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { createHash } from "node:crypto"
import { aimock, type RecordingProxy, recordingProxy, redactedKey } from "../support/Aimock.ts"
import { agentWithThread, bashStep, getRun, outputsOf, startRun, streamOf, textOf } from "../support/Conversation.ts"
import * as TestServer from "../support/TestServer.ts"
import * as Uploads from "../support/Uploads.ts"

class Proxy extends Context.Service<Proxy, RecordingProxy>()("test/Proxy") {}

const Harness = Layer.unwrap(
  Effect.gen(function*() {
    const peer = yield* aimock((mock) => {
      mock.onMessage(/describe the files/, { content: "Seen them." })
      mock.onMessage(/and now/, { content: "Still seen." })
    })
    const proxy = yield* recordingProxy(peer.url)
    const server = TestServer.layer({
      bands: {
        lite: { route: "scripted", strict: false },
        core: { route: "openai:gpt-test", strict: false },
        frontier: { route: "anthropic:claude-test", strict: false }
      },
      openai: { baseUrl: `${proxy.url}/v1`, apiKey: Option.some(redactedKey) },
      anthropic: { baseUrl: `${proxy.url}/v1`, apiKey: Option.some(redactedKey) }
    })
    return Layer.merge(server, Layer.succeed(Proxy)(proxy))
  })
)

const png = new Uint8Array([
  0x89,
  0x50,
  0x4e,
  0x47,
  0x0d,
  0x0a,
  0x1a,
  0x0a,
  0,
  0,
  0,
  13,
  0x49,
  0x48,
  0x44,
  0x52,
  1,
  2,
  3,
  255
])
const pdf = new TextEncoder().encode("%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n")
const notes = "first line\nsecond line\n"
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64")

type Body = { readonly messages: ReadonlyArray<{ readonly role: string; readonly content: unknown }> }
const sentBodies = Effect.map(Proxy, (proxy) => proxy.requests().map((r) => r.body as Body))

/** The artifact ids the manifest names, in order. */
const handlesIn = (text: string) => [...text.matchAll(/"kind":"svc","id":"(art_[0-9A-Za-z]+)"/g)].map((m) => m[1])

const uploadAll = Effect.gen(function*() {
  const image = yield* Uploads.upload({ filename: "chart.png", type: "image/png", data: png })
  const doc = yield* Uploads.upload({ filename: "report.pdf", type: "application/pdf", data: pdf })
  const text = yield* Uploads.upload({ filename: "notes.txt", type: "text/plain", data: notes })
  return [image, doc, text] as const
})

const runToEnd = (threadId: string, body: Record<string, unknown>) =>
  Effect.gen(function*() {
    const receipt = yield* startRun(threadId, body)
    const { message } = yield* streamOf(receipt.runId)
    return { run: yield* getRun(receipt.runId), message }
  })

TestServer.suiteWith(Harness)("attachments", (it) => {
  it.effect("openai: text, the manifest, an image_url data URL, a PDF file part and the text file inline; each handle serves its bytes", () =>
    Effect.gen(function*() {
      const files = yield* uploadAll
      const { thread } = yield* agentWithThread({})
      const before = (yield* sentBodies).length
      const { run, message } = yield* runToEnd(thread.id, {
        input: { text: "describe the files", attachments: files.map((f) => ({ fileId: f.id })) }
      })
      assert.strictEqual(run.status, "completed")
      assert.strictEqual(textOf(message), "Seen them.")
      const [sent] = (yield* sentBodies).slice(before)
      const user = sent.messages.at(-1)
      assert.strictEqual(user?.role, "user")
      const parts = user?.content as ReadonlyArray<Record<string, unknown>>
      assert.deepStrictEqual(parts.map((p) => p.type), ["text", "text", "image_url", "file", "text"])
      assert.deepStrictEqual(parts[0], { type: "text", text: "describe the files" })
      const manifest = String(parts[1].text)
      const ids = handlesIn(manifest)
      assert.strictEqual(ids.length, 3)
      assert.include(manifest, `"chart.png" (image/png, ${png.length} bytes)`)
      assert.include(manifest, `"report.pdf" (application/pdf, ${pdf.length} bytes)`)
      assert.deepStrictEqual(parts[2], { type: "image_url", image_url: { url: `data:image/png;base64,${b64(png)}` } })
      assert.deepStrictEqual(parts[3], {
        type: "file",
        file: { filename: "report.pdf", file_data: `data:application/pdf;base64,${b64(pdf)}` }
      })
      assert.deepStrictEqual(parts[4], {
        type: "text",
        text: `<file name="notes.txt" media_type="text/plain">\n${notes}\n</file>`
      })
      // Each handle is a run-scoped artifact of this workspace holding the file's bytes; not another workspace's.
      const served = yield* Uploads.download(`/v1/artifacts/${ids[0]}`)
      assert.strictEqual(served.status, 200)
      assert.deepStrictEqual([...served.bytes], [...png])
      assert.strictEqual((yield* Uploads.download(`/v1/artifacts/${ids[1]}`, TestServer.Keys.b)).status, 403)
    }))

  it.effect("anthropic: image and document blocks with base64 sources, the text file, the manifest, then the text", () =>
    Effect.gen(function*() {
      const files = yield* uploadAll
      const { thread } = yield* agentWithThread({})
      const before = (yield* sentBodies).length
      const { run } = yield* runToEnd(thread.id, {
        band: "frontier",
        input: { text: "describe the files", attachments: files.map((f) => ({ fileId: f.id })) }
      })
      assert.strictEqual(run.status, "completed")
      const [sent] = (yield* sentBodies).slice(before)
      const blocks = sent.messages.at(-1)?.content as ReadonlyArray<Record<string, unknown>>
      assert.deepStrictEqual(blocks.map((b) => b.type), ["image", "document", "text", "text", "text"])
      assert.deepStrictEqual(blocks[0], {
        type: "image",
        source: { type: "base64", media_type: "image/png", data: b64(png) }
      })
      assert.deepStrictEqual(blocks[1], {
        type: "document",
        source: { type: "base64", media_type: "application/pdf", data: b64(pdf) },
        title: "report.pdf"
      })
      assert.strictEqual(handlesIn(String(blocks[3].text)).length, 3)
      assert.deepStrictEqual(blocks[4], { type: "text", text: "describe the files" })
    }))

  it.effect("a later turn of the thread sends the earlier attachments again, with the same handles", () =>
    Effect.gen(function*() {
      const [image] = yield* uploadAll
      const { thread } = yield* agentWithThread({})
      const before = (yield* sentBodies).length
      yield* runToEnd(thread.id, { input: { text: "describe the files", attachments: [{ fileId: image.id }] } })
      // The thread's history is the runs created before this one.
      yield* TestClock.adjust("1 second")
      yield* runToEnd(thread.id, { input: "and now?" })
      const [first, second] = (yield* sentBodies).slice(before)
      const users = (body: Body) => body.messages.filter((m) => m.role === "user")
      assert.deepStrictEqual(users(second)[0], users(first).at(-1))
      assert.deepStrictEqual(
        (users(second)[0].content as ReadonlyArray<{ readonly type: string }>).map((p) => p.type),
        ["text", "text", "image_url"]
      )
      assert.deepStrictEqual(second.messages.at(-1), { role: "user", content: "and now?" })
    }))

  it.effect("attachments alone are an input; an unknown file, another workspace's, an unsupported type or too many refuse the run, naming the item", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({})
      const [image] = yield* uploadAll
      const post = (input: unknown) =>
        TestServer.request("POST", `/v1/threads/${thread.id}/messages`, {
          body: { input },
          headers: { accept: "application/json" }
        })
      const refused = (reply: TestServer.Reply, code: string, field: string, message: string) =>
        Effect.gen(function*() {
          const error = yield* TestServer.expectError(reply, 400, "invalid_request_error", code)
          assert.deepStrictEqual(error.details, { field })
          assert.strictEqual(error.message, message)
        })

      yield* refused(
        yield* post({ text: "x", attachments: [{ fileId: image.id }, { fileId: "file_doesnotexist0000000000" }] }),
        "file_not_found",
        "input.attachments[1].fileId",
        "input.attachments[1]: no file 'file_doesnotexist0000000000' exists."
      )
      const theirs = yield* Uploads.upload(
        { filename: "theirs.txt", type: "text/plain", data: "not yours" },
        TestServer.Keys.b
      )
      yield* refused(
        yield* post({ attachments: [{ fileId: theirs.id }] }),
        "invalid_request_error",
        "input.attachments[0].fileId",
        `input.attachments[0]: the file '${theirs.id}' belongs to another workspace.`
      )
      const zip = yield* Uploads.upload({ filename: "data.zip", type: "application/zip", data: "PK\u0003\u0004rest" })
      yield* refused(
        yield* post({ attachments: [{ fileId: zip.id }] }),
        "invalid_request_error",
        "input.attachments[0].fileId",
        `input.attachments[0]: the file '${zip.id}' (data.zip) cannot be attached: its media type application/zip cannot be shown to the model ` +
          "(images png/jpeg/gif/webp, PDF and text files can); an agent with a managed workspace receives any file there."
      )
      yield* refused(
        yield* post({ attachments: Array.from({ length: 21 }, () => ({ fileId: image.id })) }),
        "invalid_request_error",
        "input.attachments",
        "At most 20 files can be attached to one input; got 21."
      )
      // Nothing was started by the refused inputs.
      const runs = yield* TestServer.request("GET", `/v1/runs?threadId=${thread.id}`)
      assert.deepStrictEqual((runs.json as { data: ReadonlyArray<unknown> }).data, [])

      const { run } = yield* runToEnd(thread.id, { band: "lite", input: { attachments: [{ fileId: image.id }] } })
      assert.strictEqual(run.status, "completed")
    }))

  it.effect("with a managed workspace every attached file is placed under attachments/ (binary intact); a type the model cannot read goes there only", () =>
    Effect.gen(function*() {
      const data = Uploads.everyByte(4)
      const zip = yield* Uploads.upload({ filename: "data.zip", type: "application/zip", data })
      const text = yield* Uploads.upload({ filename: "notes.txt", type: "text/plain", data: notes })
      const again = yield* Uploads.upload({ filename: "notes.txt", type: "text/plain", data: "second\n" })
      const { thread } = yield* agentWithThread({
        workspace: { type: "managed", shell: true, network: { mode: "offline" } }
      })
      const command = "cd attachments && sha256sum data.zip notes.txt 'notes (2).txt' && stat -c %s data.zip"
      const { run, chunks } = yield* Effect.gen(function*() {
        const receipt = yield* startRun(thread.id, {
          band: "lite",
          input: { text: bashStep(command), attachments: [zip, text, again].map((f) => ({ fileId: f.id })) }
        })
        const { chunks } = yield* streamOf(receipt.runId)
        return { run: yield* getRun(receipt.runId), chunks }
      })
      assert.strictEqual(run.status, "completed")
      const sha = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex")
      assert.deepStrictEqual(outputsOf(chunks), [{
        exitCode: 0,
        stdout: `${sha(data)}  data.zip\n${sha(notes)}  notes.txt\n${sha("second\n")}  notes (2).txt\n${data.length}\n`,
        stderr: ""
      }])
    }))
})
