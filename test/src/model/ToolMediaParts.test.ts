/**
 * view_media's images and mediaFidelity on the wire, both provider shapes,
 * against aimock over real HTTP behind a recording proxy: `auto` images
 * follow the step's tool messages as one user message of `image_url` parts
 * (OpenAI-compatible) or go inside the `tool_result` as `image` blocks
 * (Anthropic); `spatial` adds `detail: "high"` to every OpenAI image part,
 * attachments too, and changes nothing in Anthropic's blocks; only the latest
 * views of the turn are sent, older ones named; an `analysis` call is the
 * question and the images as a user message of its own.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import type { AttachmentRef, Message } from "../../../domain/Conversation.ts"
import { ToolCallId } from "../../../domain/Ids.ts"
import { analysisRequest, analysisSystem } from "../../../src/media/view/VisionAnalysis.ts"
import { makeAnthropicModel } from "../../../src/model/AnthropicModel.ts"
import { manifest } from "../../../src/model/AttachmentParts.ts"
import type { ModelProvider, ModelRequest } from "../../../src/model/ModelProvider.ts"
import { makeOpenAiModel } from "../../../src/model/OpenAiModel.ts"
import { aimock, recordingProxy, redactedKey } from "../../support/Aimock.ts"

const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 255, 1, 254])
const jpeg = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3])
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64")

const image = (artifactId: string, mediaType = "image/png", bytes = png): AttachmentRef => ({
  artifactId,
  filename: `${artifactId}.png`,
  mediaType,
  bytes: bytes.length,
  sha256: "0".repeat(64),
  as: "image"
})

/** One view_media call `n` (provider id `call_v<n>`) and its result showing `media`. */
const view = (n: number, media: ReadonlyArray<AttachmentRef>): Array<Message> => [
  {
    role: "assistant",
    content: "",
    toolCalls: [{
      id: ToolCallId.make(`tc_${n}`),
      providerId: `call_v${n}`,
      name: "view_media",
      input: { source: "x" }
    }]
  },
  {
    role: "tool",
    toolCallId: ToolCallId.make(`tc_${n}`),
    toolName: "view_media",
    content: `Viewed ${n}.`,
    isError: false,
    media
  }
]

const files = new Map([["art_a", png], ["art_b", jpeg], ["art_c", png], ["art_d", png], ["art_e", png]])

const oneView: ModelRequest = {
  system: "",
  messages: [{ role: "user", content: "look at it" }, ...view(1, [image("art_a"), image("art_b", "image/jpeg", jpeg)])],
  tools: [],
  outputSchema: undefined,
  files
}

const openAi = (baseUrl: string) => makeOpenAiModel({ model: "m", baseUrl, apiKey: redactedKey })
const anthropic = (baseUrl: string) => makeAnthropicModel({ model: "m", baseUrl, apiKey: redactedKey })

/** The body a provider sent for `request`, as aimock received it (and answered 200). */
const sent = (make: (baseUrl: string) => ModelProvider, request: ModelRequest) =>
  Effect.gen(function*() {
    const peer = yield* aimock((mock) => mock.on({ predicate: () => true }, { content: "Seen." }))
    const proxy = yield* recordingProxy(peer.url)
    yield* Stream.runDrain(make(`${proxy.url}/v1`).stream(request))
    assert.deepStrictEqual((yield* peer.journal).map((e) => e.response.status), [200])
    const [recorded] = proxy.requests()
    return recorded.body as { readonly system?: unknown; readonly messages: ReadonlyArray<unknown> }
  })

const call = (n: number) => ({
  role: "assistant",
  content: null,
  tool_calls: [{
    id: `call_v${n}`,
    type: "function",
    function: { name: "view_media", arguments: "{\"source\":\"x\"}" }
  }]
})
const openAiPart = (bytes: Uint8Array, mediaType: string, detail?: "high") => ({
  type: "image_url",
  image_url: { url: `data:${mediaType};base64,${b64(bytes)}`, ...(detail === undefined ? {} : { detail }) }
})
const anthropicBlock = (bytes: Uint8Array, mediaType: string) => ({
  type: "image",
  source: { type: "base64", media_type: mediaType, data: b64(bytes) }
})

describe("view_media images on the wire", () => {
  it.effect("OpenAI-compatible, standard: the images follow the tool message as a user message of image_url parts", () =>
    Effect.gen(function*() {
      const body = yield* sent(openAi, oneView)
      assert.deepStrictEqual(body.messages, [
        { role: "user", content: "look at it" },
        call(1),
        { role: "tool", tool_call_id: "call_v1", content: "Viewed 1." },
        {
          role: "user",
          content: [
            { type: "text", text: "The images of the view_media result of call call_v1:" },
            openAiPart(png, "image/png"),
            openAiPart(jpeg, "image/jpeg")
          ]
        }
      ])
    }))

  it.effect("OpenAI-compatible, spatial: detail high on view_media images and on attached images", () =>
    Effect.gen(function*() {
      const attached = image("art_c")
      const request: ModelRequest = {
        ...oneView,
        messages: [{ role: "user", content: "look at it", attachments: [attached] }, ...oneView.messages.slice(1)],
        mediaFidelity: "spatial"
      }
      const body = yield* sent(openAi, request)
      assert.deepStrictEqual(body.messages, [
        {
          role: "user",
          content: [
            { type: "text", text: "look at it" },
            { type: "text", text: manifest([attached]) },
            openAiPart(png, "image/png", "high")
          ]
        },
        call(1),
        { role: "tool", tool_call_id: "call_v1", content: "Viewed 1." },
        {
          role: "user",
          content: [
            { type: "text", text: "The images of the view_media result of call call_v1:" },
            openAiPart(png, "image/png", "high"),
            openAiPart(jpeg, "image/jpeg", "high")
          ]
        }
      ])
    }))

  it.effect("Anthropic: the images go inside the tool_result after its text, the same at both fidelities", () =>
    Effect.gen(function*() {
      const expected = [
        { role: "user", content: [{ type: "text", text: "look at it" }] },
        {
          role: "assistant",
          content: [{ type: "tool_use", id: "call_v1", name: "view_media", input: { source: "x" } }]
        },
        {
          role: "user",
          content: [{
            type: "tool_result",
            tool_use_id: "call_v1",
            content: [
              { type: "text", text: "Viewed 1." },
              anthropicBlock(png, "image/png"),
              anthropicBlock(jpeg, "image/jpeg")
            ],
            is_error: false
          }]
        }
      ]
      assert.deepStrictEqual((yield* sent(anthropic, oneView)).messages, expected)
      assert.deepStrictEqual((yield* sent(anthropic, { ...oneView, mediaFidelity: "spatial" })).messages, expected)
    }))

  it.effect("only the latest three views of the turn are sent; older ones, and earlier turns', are named", () =>
    Effect.gen(function*() {
      const request: ModelRequest = {
        ...oneView,
        messages: [
          { role: "user", content: "first turn" },
          ...view(1, [image("art_a")]),
          { role: "user", content: "second turn" },
          ...view(2, [image("art_b", "image/jpeg", jpeg)]),
          ...view(3, [image("art_c")]),
          ...view(4, [image("art_d")]),
          ...view(5, [image("art_e")])
        ]
      }
      const named = (n: number, id: string) =>
        `Viewed ${n}.\n[The image of this result is not sent again (${id}); call view_media with one of these ids as its source to look again.]`
      const body = yield* sent(openAi, request)
      const images = (n: number) => ({
        role: "user",
        content: [
          { type: "text", text: `The images of the view_media result of call call_v${n}:` },
          openAiPart(png, "image/png")
        ]
      })
      assert.deepStrictEqual(body.messages, [
        { role: "user", content: "first turn" },
        call(1),
        { role: "tool", tool_call_id: "call_v1", content: named(1, "art_a") },
        { role: "user", content: "second turn" },
        call(2),
        { role: "tool", tool_call_id: "call_v2", content: named(2, "art_b") },
        call(3),
        { role: "tool", tool_call_id: "call_v3", content: "Viewed 3." },
        images(3),
        call(4),
        { role: "tool", tool_call_id: "call_v4", content: "Viewed 4." },
        images(4),
        call(5),
        { role: "tool", tool_call_id: "call_v5", content: "Viewed 5." },
        images(5)
      ])
      const anthropicBody = yield* sent(anthropic, request)
      const results = anthropicBody.messages.flatMap((m) =>
        (m as { readonly content: ReadonlyArray<{ readonly type: string; readonly content?: unknown }> }).content
          .filter((b) => b.type === "tool_result")
          .map((b) => b.content)
      )
      assert.deepStrictEqual(results.slice(0, 2), [named(1, "art_a"), named(2, "art_b")])
      assert.deepStrictEqual(results[2], [{ type: "text", text: "Viewed 3." }, anthropicBlock(png, "image/png")])
    }))

  it.effect("analysis: a call of its own, the media line and the question with the images as attachments", () =>
    Effect.gen(function*() {
      const page = image("art_pdf#page-1", "image/jpeg", jpeg)
      const input = {
        question: "What does page 1 say?",
        images: [{ ref: page, bytes: jpeg }],
        describes: "the PDF report.pdf: pages 1-1 of 1 at 192 DPI"
      }
      const text = "Media: the PDF report.pdf: pages 1-1 of 1 at 192 DPI.\nQuestion: What does page 1 say?"
      const openAiBody = yield* sent(openAi, analysisRequest(input, "spatial"))
      assert.deepStrictEqual(openAiBody.messages, [
        { role: "system", content: analysisSystem },
        {
          role: "user",
          content: [
            { type: "text", text },
            { type: "text", text: manifest([page]) },
            openAiPart(jpeg, "image/jpeg", "high")
          ]
        }
      ])
      const anthropicBody = yield* sent(anthropic, analysisRequest(input, "standard"))
      assert.strictEqual(anthropicBody.system, analysisSystem)
      assert.deepStrictEqual(anthropicBody.messages, [{
        role: "user",
        content: [anthropicBlock(jpeg, "image/jpeg"), { type: "text", text: manifest([page]) }, { type: "text", text }]
      }])
    }))
})
