/**
 * Reads our SSE streams the way a client does: frames with their ids, and the
 * `ai` package's own parser (`parseJsonEventStream` with
 * `uiMessageChunkSchema`) and fold (`readUIMessageStream`), which must accept
 * every stream we emit.
 */
import {
  parseJsonEventStream,
  readUIMessageStream,
  type UIMessage,
  type UIMessageChunk,
  uiMessageChunkSchema
} from "ai"
import { Effect } from "effect"

export interface Frame {
  readonly id: number | undefined
  readonly data: string
}

export const frames = (text: string): ReadonlyArray<Frame> =>
  text
    .split("\n\n")
    .filter((block) => block.trim() !== "")
    .map((block) => {
      let id: number | undefined
      const data: Array<string> = []
      for (const line of block.split("\n")) {
        if (line.startsWith("id: ")) id = Number(line.slice(4))
        if (line.startsWith("data: ")) data.push(line.slice(6))
      }
      return { id, data: data.join("\n") }
    })

export interface Parsed {
  readonly chunks: ReadonlyArray<UIMessageChunk>
  /** Texts of the stream's own `error` chunks (spec 6.2: the run may go on after them). */
  readonly errors: ReadonlyArray<string>
  readonly message: UIMessage | undefined
  /** Frame ids in order (the final `[DONE]` frame has none). */
  readonly ids: ReadonlyArray<number>
}

/** Fails when the `ai` package rejects a chunk or cannot fold the stream. */
export const parseWithAi = (text: string): Effect.Effect<Parsed, Error> =>
  Effect.tryPromise({
    try: async () => {
      const body = new Response(text).body
      if (body === null) throw new Error("empty stream")
      const chunks: Array<UIMessageChunk> = []
      const reader = parseJsonEventStream({ stream: body, schema: uiMessageChunkSchema }).getReader()
      while (true) {
        const { done, value } = await reader.read()
        if (done) break
        if (!value.success) {
          throw new Error(
            `the ai package rejected a chunk: ${String(value.error)}\n${
              value.rawValue === undefined ? "" : JSON.stringify(value.rawValue)
            }`
          )
        }
        chunks.push(value.value)
      }
      // `error` chunks reach onError by design; anything else reaching it is a stream the SDK cannot fold.
      const errorTexts = chunks.flatMap((c) => (c.type === "error" ? [c.errorText] : []))
      const expected = [...errorTexts]
      let message: UIMessage | undefined
      let failure: unknown
      for await (
        const snapshot of readUIMessageStream({
          stream: ReadableStream.from(chunks),
          onError: (error) => {
            const at = expected.indexOf(error instanceof Error ? error.message : String(error))
            if (at >= 0) expected.splice(at, 1)
            else failure ??= error
          }
        })
      ) message = snapshot
      if (failure !== undefined) throw failure instanceof Error ? failure : new Error(String(failure))
      const ids = frames(text).flatMap((f) => (f.id === undefined ? [] : [f.id]))
      return { chunks, errors: errorTexts, message, ids }
    },
    catch: (e) => (e instanceof Error ? e : new Error(String(e)))
  })
