/**
 * The thread's cached context prefix (spec 2.2, 4.1 rule 5, 4.2): an edit of
 * the thread's context folds in at the next rebuild (forceRefresh, a band
 * change, a cold thread), while the agent's context reaches the next run at
 * once. What the provider is sent is read from aimock's request journal.
 */
import { assert } from "@effect/vitest"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { TestClock } from "effect/testing"
import { type Aimock, aimock, redactedKey } from "../support/Aimock.ts"
import * as Collection from "../support/Collection.ts"
import { agentWithThread, startRun, streamOf } from "../support/Conversation.ts"
import * as TestServer from "../support/TestServer.ts"

class Peer extends Context.Service<Peer, Aimock>()("test/Peer") {}

const Harness = Layer.unwrap(
  Effect.gen(function*() {
    const peer = yield* aimock((mock) => {
      mock.onMessage(/turn/, { content: "ok", usage: { prompt_tokens: 5, completion_tokens: 1 } })
    })
    const server = TestServer.layer({
      bands: {
        lite: { route: "openai:gpt-lite", strict: false },
        core: { route: "openai:gpt-core", strict: false },
        frontier: { route: null, strict: false }
      },
      openai: { baseUrl: `${peer.url}/v1`, apiKey: Option.some(redactedKey) }
    })
    return Layer.merge(server, Layer.succeed(Peer)(peer))
  })
)

const SystemOf = Schema.Struct({
  messages: Schema.Array(Schema.Struct({ role: Schema.String, content: Schema.Unknown }))
})
const decodeSystemOf = Schema.decodeUnknownEffect(SystemOf)

/** Runs one turn to its end and returns the system prompt the provider received for it. */
const turn = (threadId: string, body: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const { runId } = yield* startRun(threadId, { input: "turn", ...body })
    yield* streamOf(runId)
    const journal = yield* (yield* Peer).journal
    const last = journal.at(-1)
    const { messages } = yield* Effect.orDie(decodeSystemOf(last?.body))
    return String(messages.find((m) => m.role === "system")?.content)
  })

const patchThread = (id: string, body: Record<string, unknown>) => Collection.threads.update(id, body)

const sees = (system: string, present: ReadonlyArray<string>, absent: ReadonlyArray<string>) => {
  for (const text of present) assert.include(system, text)
  for (const text of absent) assert.notInclude(system, text)
}

TestServer.suiteWith(Harness)("the thread's cached context prefix", (it) => {
  it.effect("a thread context edit waits for forceRefresh, a band change or a cold thread; an agent edit applies at once", () =>
    Effect.gen(function*() {
      const { agent, thread } = yield* agentWithThread({ context: "Agent rule one." }, { context: "Thread note v1." })
      sees(yield* turn(thread.id), ["Agent rule one.", "Thread note v1."], [])

      // Deferred: the warm thread keeps its prefix; the agent's context is not deferred.
      yield* TestClock.adjust("10 seconds")
      yield* patchThread(thread.id, { context: "Thread note v2." })
      yield* Collection.agents.update(agent.id, { context: "Agent rule two." })
      sees(yield* turn(thread.id), ["Agent rule two.", "Thread note v1."], ["Thread note v2.", "Agent rule one."])

      // forceRefresh (alone, after the edit) rebuilds at the next run.
      yield* TestClock.adjust("10 seconds")
      yield* patchThread(thread.id, { forceRefresh: true })
      sees(yield* turn(thread.id), ["Thread note v2."], ["Thread note v1."])

      // An edit sent with forceRefresh applies at the next run.
      yield* TestClock.adjust("10 seconds")
      yield* patchThread(thread.id, { context: "Thread note v3.", forceRefresh: true })
      sees(yield* turn(thread.id), ["Thread note v3."], ["Thread note v2."])

      // A band change rebuilds; the prefix is then the new band's.
      yield* TestClock.adjust("10 seconds")
      yield* patchThread(thread.id, { context: "Thread note v4." })
      sees(yield* turn(thread.id, { band: "lite" }), ["Thread note v4."], ["Thread note v3."])
      yield* TestClock.adjust("10 seconds")
      yield* patchThread(thread.id, { context: "Thread note v5." })
      sees(yield* turn(thread.id, { band: "lite" }), ["Thread note v4."], ["Thread note v5."])

      // Idle for the warm duration (60 s): the thread is cold and rebuilds.
      yield* TestClock.adjust("59 seconds")
      sees(yield* turn(thread.id, { band: "lite" }), ["Thread note v4."], ["Thread note v5."])
      yield* TestClock.adjust("60 seconds")
      sees(yield* turn(thread.id, { band: "lite" }), ["Thread note v5."], ["Thread note v4."])
    }))

  it.effect("a new thread's first run uses its context as it is", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({}, { context: "First note." })
      yield* patchThread(thread.id, { context: "Edited before any run." })
      sees(yield* turn(thread.id), ["Edited before any run."], ["First note."])
    }))
})
