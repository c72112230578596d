/**
 * Subagents as a client sees them: the scripted directive that delegates
 * tasks, the tasks a root's stream announces (`data-svc-task`, also read
 * while the root is still waiting on its workers), and a worker's sub-stream
 * parsed by the `ai` package.
 */
import { assert } from "@effect/vitest"
import { Effect, Schema } from "effect"
import type { Chunk } from "../../domain/Chunk.ts"
import { TaskData } from "../../domain/Worker.ts"
import { chunksUntil } from "./Conversation.ts"
import * as TestServer from "./TestServer.ts"
import { parseWithAi } from "./UiStream.ts"

/** The scripted directive delegating `tasks` in one step. */
export const delegate = (...tasks: ReadonlyArray<Record<string, unknown>>) => `/delegate ${JSON.stringify(tasks)}`

const decodeTask = Schema.decodeUnknownSync(TaskData)

/** The tasks a root's stream announced, in order. */
export const tasksOf = (
  chunks: ReadonlyArray<Chunk | { readonly type: string }>
): ReadonlyArray<typeof TaskData.Type> =>
  chunks.flatMap((c) => (c.type === "data-svc-task" && "data" in c ? [decodeTask(c.data)] : []))

/** A worker's sub-stream, read to its end (the worker's end, or its park) and parsed by the `ai` package. */
export const subStream = (rootRunId: string, workerRef: string, lastEventId?: string) =>
  Effect.gen(function*() {
    const reply = yield* TestServer.request("GET", `/v1/runs/${rootRunId}/workers/${workerRef}/stream`, {
      headers: lastEventId === undefined ? {} : { "last-event-id": lastEventId }
    })
    assert.strictEqual(reply.status, 200, reply.text)
    return yield* Effect.orDie(parseWithAi(reply.text))
  })

/** The worker run id of a sub-stream (its `start` chunk's message id). */
export const workerRunIdOf = (chunks: ReadonlyArray<{ readonly type: string }>) => {
  const start = chunks[0]
  return start !== undefined && start.type === "start" && "messageId" in start ? String(start.messageId) : ""
}

/** The root's stream (it stays open while workers run) until `count` tasks are announced. */
export const tasksAnnounced = (runId: string, count: number) =>
  Effect.map(chunksUntil(`/v1/runs/${runId}/stream`, (chunks) => tasksOf(chunks).length >= count), tasksOf)
