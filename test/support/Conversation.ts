/**
 * Talking to an agent through the API, as a chat client does, with the
 * client in context and key a: an agent with a thread, a message sent with
 * its stream read to the end (or started for a receipt), a run's stream
 * replayed and parsed by the `ai` package, the Run resource, and the text of
 * the answer as the `ai` package folded it.
 */
import { assert } from "@effect/vitest"
import type { UIMessageChunk } from "ai"
import { Effect, Schema } from "effect"
import { Chunk, ToolFailureOutput } from "../../domain/Chunk.ts"
import { Run, RunReceipt } from "../../domain/Run.ts"
import { Thread } from "../../domain/Thread.ts"
import * as Collection from "./Collection.ts"
import * as TestServer from "./TestServer.ts"
import { parseWithAi } from "./UiStream.ts"

/** An agent created with `agentBody`, and a thread on it created with `threadBody`. */
export const agentWithThread = (agentBody: Record<string, unknown> = {}, threadBody: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const agent = yield* Collection.agents.create(agentBody)
    const thread = yield* Collection.threads.create({ agentId: agent.id, ...threadBody })
    return { agent, thread }
  })

/** Sends `input` and reads the streamed answer to its end (the run ends or parks): the run id and the parsed stream. */
export const send = (threadId: string, input: string) =>
  Effect.gen(function*() {
    const reply = yield* TestServer.request("POST", `/v1/threads/${threadId}/messages`, { body: { input } })
    const runId = reply.headers.get("svc-run-id") ?? ""
    return { runId, parsed: yield* Effect.orDie(parseWithAi(reply.text)) }
  })

/** Starts a run with the message `body` and returns its receipt (Accept: application/json), without waiting for it. */
export const startRun = (threadId: string, body: Record<string, unknown>) =>
  Effect.flatMap(
    TestServer.request("POST", `/v1/threads/${threadId}/messages`, { body, headers: { accept: "application/json" } }),
    (reply) => TestServer.expectOk(reply, 200, RunReceipt)
  )

/** The whole stream of a run (it ends when the run ends or parks), from after `lastEventId` when given: 200, parsed by the `ai` package. */
export const streamOf = (runId: string, lastEventId?: string) =>
  Effect.gen(function*() {
    const reply = yield* TestServer.request("GET", `/v1/runs/${runId}/stream`, {
      headers: lastEventId === undefined ? {} : { "last-event-id": lastEventId }
    })
    assert.strictEqual(reply.status, 200, reply.text)
    const parsed = yield* Effect.orDie(parseWithAi(reply.text))
    return { reply, ...parsed }
  })

/** The Run resource. */
export const getRun = (runId: string) =>
  Effect.flatMap(TestServer.request("GET", `/v1/runs/${runId}`), (reply) => TestServer.expectOk(reply, 200, Run))

/** The text parts of a folded answer, joined. */
export const textOf = (message: { readonly parts: ReadonlyArray<{ readonly type: string }> } | undefined) =>
  (message?.parts ?? []).flatMap((
    p
  ) => ("text" in p && p.type === "text" && typeof p.text === "string" ? [p.text] : [])).join("")

/** The service's own tool call ids (`tc_` + 22 base62 characters, spec 1). */
export const toolCallIdShape = /^tc_[0-9A-Za-z]{22}$/

/** The tool call ids of a stream, in the order the calls started; asserts each is the service's own `tc_` id. */
export const callIdsOf = (chunks: ReadonlyArray<UIMessageChunk>): ReadonlyArray<string> => {
  const ids = chunks.flatMap((c) => (c.type === "tool-input-start" ? [c.toolCallId] : []))
  for (const id of ids) assert.match(id, toolCallIdShape)
  return ids
}

/** The Thread resource. */
export const getThread = (threadId: string) =>
  Effect.flatMap(
    TestServer.request("GET", `/v1/threads/${threadId}`),
    (reply) => TestServer.expectOk(reply, 200, Thread)
  )

/** The outputs of a stream's `tool-output-available` chunks, in order. */
export const outputsOf = (chunks: ReadonlyArray<{ readonly type: string }>): ReadonlyArray<unknown> =>
  chunks.flatMap((c) => (c.type === "tool-output-available" && "output" in c ? [c.output] : []))

const isToolFailure = Schema.is(ToolFailureOutput)

/**
 * The expected failures of a stream, in order: the `tool-output-available` chunks whose output
 * is `{ type: "tool-output-error", error: { code, message, details? } }` (spec 6.2).
 */
export const failuresOf = (
  chunks: ReadonlyArray<{ readonly type: string }>
): ReadonlyArray<{ readonly toolCallId: string; readonly error: ToolFailureOutput["error"] }> =>
  chunks.flatMap((c) =>
    c.type === "tool-output-available" && "output" in c && "toolCallId" in c && typeof c.toolCallId === "string" &&
      isToolFailure(c.output)
      ? [{ toolCallId: c.toolCallId, error: c.output.error }]
      : []
  )

/** The outputs of a stream's calls that succeeded (`tool-output-available` chunks that are no failure), in order. */
export const successesOf = (chunks: ReadonlyArray<{ readonly type: string }>): ReadonlyArray<unknown> =>
  outputsOf(chunks).filter((output) => !isToolFailure(output))

/** The expected failures of a stream as `code: message`, in order. */
export const failureTextsOf = (chunks: ReadonlyArray<{ readonly type: string }>): ReadonlyArray<string> =>
  failuresOf(chunks).map((f) => `${f.error.code}: ${f.error.message}`)

/** The data of a stream's chunks of `type` (`data-svc-usage`, ...), in order. */
export const dataOf = (chunks: ReadonlyArray<{ readonly type: string }>, type: string): ReadonlyArray<unknown> =>
  chunks.flatMap((c) => (c.type === type && "data" in c ? [c.data] : []))

/** The data of a stream's first chunk of `type`, undefined when there is none. */
export const firstDataOf = (chunks: ReadonlyArray<{ readonly type: string }>, type: string): unknown =>
  dataOf(chunks, type)[0]

/** The data of a stream's `data-svc-tool-result-overflow` chunks, in order. */
export const overflowsOf = (chunks: ReadonlyArray<{ readonly type: string }>): ReadonlyArray<unknown> =>
  dataOf(chunks, "data-svc-tool-result-overflow")

/** The scripted model's directive for one step calling `tool` with `input`. */
export const toolStep = (tool: string, input: unknown = {}) => `/tool ${tool} ${JSON.stringify(input)}`

/** A step running `command` with the workspace's `bash` tool. */
export const bashStep = (command: string) => toolStep("bash", { command })

const decodeChunk = Schema.decodeUnknownSync(Schema.fromJsonString(Chunk))

/**
 * Reads the SSE stream at `path` as it arrives (key a) until `until` holds for its chunks so
 * far, then closes it: for a stream that stays open (a root waiting on its workers).
 */
export const chunksUntil = (path: string, until: (chunks: ReadonlyArray<Chunk>) => boolean) =>
  Effect.flatMap(TestServer.TestApi, (api) =>
    Effect.promise(async () => {
      const abort = new AbortController()
      const response = await fetch(api.url + path, {
        headers: { authorization: `Bearer ${TestServer.Keys.a}` },
        signal: abort.signal
      })
      const reader = response.body?.getReader()
      const chunks: Array<Chunk> = []
      let buffered = ""
      while (reader !== undefined) {
        const { done, value } = await reader.read()
        if (done) break
        buffered += new TextDecoder().decode(value)
        const frames = buffered.split("\n\n")
        buffered = frames.pop() ?? ""
        for (const frame of frames) {
          const data = frame.split("\n").find((line) => line.startsWith("data: "))?.slice(6)
          if (data !== undefined && data !== "[DONE]") chunks.push(decodeChunk(data))
        }
        if (until(chunks)) break
      }
      abort.abort()
      return chunks
    }))
