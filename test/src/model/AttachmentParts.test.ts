/**
 * Attachments on the wire (spec 4.3 rule 1): both provider kinds, against
 * aimock over real HTTP behind a recording proxy, get the manifest and each
 * file as their native part: OpenAI-compatible `image_url` / `file` parts,
 * Anthropic `image` / `document` blocks; text files inline as text; a
 * workspace-only file by its manifest line alone; a file the store no longer
 * has, by a note.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import type { AttachmentRef, Message } from "../../../domain/Conversation.ts"
import { makeAnthropicModel } from "../../../src/model/AnthropicModel.ts"
import { manifest } from "../../../src/model/AttachmentParts.ts"
import type { ModelProvider, ModelRequest } from "../../../src/model/ModelProvider.ts"
import { makeOpenAiModel } from "../../../src/model/OpenAiModel.ts"
import { aimock, recordingProxy, redactedKey } from "../../support/Aimock.ts"

const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 255, 1, 254])
const pdf = new TextEncoder().encode("%PDF-1.4\n%\u00e2\u00e3\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n")
const notes = new TextEncoder().encode("line one\nline two: caf\u00e9\n")
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64")

const ref = (
  artifactId: string,
  filename: string,
  mediaType: string,
  bytes: number,
  as: AttachmentRef["as"],
  path?: string
): AttachmentRef => ({
  artifactId,
  filename,
  mediaType,
  bytes,
  sha256: "0".repeat(64),
  as,
  ...(path === undefined ? {} : { path })
})
const attachments: ReadonlyArray<AttachmentRef> = [
  ref("art_png", "chart.png", "image/png", png.length, "image"),
  ref("art_pdf", "report.pdf", "application/pdf", pdf.length, "document"),
  ref("art_txt", "notes.txt", "text/plain; charset=utf-8", notes.length, "text", "attachments/notes.txt"),
  ref("art_zip", "data.zip", "application/zip", 4096, "workspace", "attachments/data.zip"),
  ref("art_gone", "old.png", "image/png", 10, "image")
]
const files = new Map([["art_png", png], ["art_pdf", pdf], ["art_txt", notes]])
const messages: ReadonlyArray<Message> = [{ role: "user", content: "summarize these", attachments }]
const request: ModelRequest = { system: "", messages, tools: [], outputSchema: undefined, files }

const manifestText = [
  "<attachments>",
  `- "chart.png" (image/png, 12 bytes) handle {"kind":"svc","id":"art_png"}`,
  `- "report.pdf" (application/pdf, ${pdf.length} bytes) handle {"kind":"svc","id":"art_pdf"}`,
  `- "notes.txt" (text/plain; charset=utf-8, ${notes.length} bytes) handle {"kind":"svc","id":"art_txt"}; in the workspace at attachments/notes.txt`,
  `- "data.zip" (application/zip, 4096 bytes) handle {"kind":"svc","id":"art_zip"}; in the workspace at attachments/data.zip; not shown inline: read it in the workspace`,
  `- "old.png" (image/png, 10 bytes) handle {"kind":"svc","id":"art_gone"}`,
  "</attachments>"
].join("\n")
const notesText =
  `<file name="notes.txt" media_type="text/plain; charset=utf-8">\nline one\nline two: caf\u00e9\n\n</file>`
const goneText = `[The attachment "old.png" (art_gone) is no longer stored; only its manifest line remains.]`

/** The messages a provider made of `request`, as aimock received them (and answered 200). */
const sentMessages = (make: (baseUrl: string) => ModelProvider) =>
  Effect.gen(function*() {
    const peer = yield* aimock((mock) => mock.onMessage(/summarize/, { content: "Done." }))
    const proxy = yield* recordingProxy(peer.url)
    yield* Stream.runDrain(make(`${proxy.url}/v1`).stream(request))
    assert.deepStrictEqual((yield* peer.journal).map((e) => e.response.status), [200])
    const [sent] = proxy.requests()
    return (sent.body as { readonly messages: ReadonlyArray<unknown> }).messages
  })

describe("AttachmentParts", () => {
  it("the manifest names each file, its type, size, svc handle and workspace path", () => {
    assert.strictEqual(manifest(attachments), manifestText)
  })

  it.effect("OpenAI-compatible: text, manifest, image_url data URL, file part for the PDF, inline text", () =>
    Effect.gen(function*() {
      const messages = yield* sentMessages((baseUrl) => makeOpenAiModel({ model: "m", baseUrl, apiKey: redactedKey }))
      assert.deepStrictEqual(messages, [{
        role: "user",
        content: [
          { type: "text", text: "summarize these" },
          { type: "text", text: manifestText },
          { type: "image_url", image_url: { url: `data:image/png;base64,${b64(png)}` } },
          { type: "file", file: { filename: "report.pdf", file_data: `data:application/pdf;base64,${b64(pdf)}` } },
          { type: "text", text: notesText },
          { type: "text", text: goneText }
        ]
      }])
    }))

  it.effect("Anthropic: image and document blocks with base64 sources, then the manifest and the text", () =>
    Effect.gen(function*() {
      const messages = yield* sentMessages((baseUrl) =>
        makeAnthropicModel({ model: "m", baseUrl, apiKey: redactedKey })
      )
      assert.deepStrictEqual(messages, [{
        role: "user",
        content: [
          { type: "image", source: { type: "base64", media_type: "image/png", data: b64(png) } },
          {
            type: "document",
            source: { type: "base64", media_type: "application/pdf", data: b64(pdf) },
            title: "report.pdf"
          },
          { type: "text", text: notesText },
          { type: "text", text: goneText },
          { type: "text", text: manifestText },
          { type: "text", text: "summarize these" }
        ]
      }])
    }))

  it.effect("a message without attachments keeps its plain shape on both providers", () =>
    Effect.gen(function*() {
      const peer = yield* aimock((mock) => mock.onMessage(/plain/, { content: "ok" }))
      const proxy = yield* recordingProxy(peer.url)
      const plain: ModelRequest = { ...request, messages: [{ role: "user", content: "plain" }] }
      yield* Stream.runDrain(
        makeOpenAiModel({ model: "m", baseUrl: `${proxy.url}/v1`, apiKey: redactedKey }).stream(plain)
      )
      yield* Stream.runDrain(
        makeAnthropicModel({ model: "m", baseUrl: `${proxy.url}/v1`, apiKey: redactedKey }).stream(plain)
      )
      const [openai, anthropic] = proxy.requests().map((r) => (r.body as { messages: unknown }).messages)
      assert.deepStrictEqual(openai, [{ role: "user", content: "plain" }])
      assert.deepStrictEqual(anthropic, [{ role: "user", content: [{ type: "text", text: "plain" }] }])
    }))
})
