/**
 * data_handling_unavailable (spec 7): a strict run is refused at start when
 * its band has no verified zero-retention route (400, before any run exists);
 * a strict run that started on a verified route and resumes after a restart
 * whose configuration no longer verifies it fails before any inference.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Interaction } from "../../domain/Interaction.ts"
import { agentWithThread, getRun, send } from "../support/Conversation.ts"
import { testDatabase } from "../support/TestDatabase.ts"
import * as TestServer from "../support/TestServer.ts"

const question = {
  title: "Go on?",
  questions: [{ id: "go", prompt: "Go on?", options: [{ id: "yes", label: "Yes" }] }]
}

describe("strict data handling across a restart", () => {
  it.effect(
    "a parked strict run resumed on a band that lost its verified route fails with data_handling_unavailable",
    () =>
      Effect.gen(function*() {
        const db = yield* testDatabase
        const serve = (strict: boolean) =>
          Effect.map(TestServer.freePort, (runnerPort) =>
            TestServer.layerWith({
              ...TestServer.baseConfig(db.url, runnerPort),
              bands: {
                lite: { route: "scripted", strict },
                core: { route: "scripted", strict },
                frontier: { route: null, strict: false }
              }
            }))

        // On a verified route: the strict run starts and parks on a question.
        const parked = yield* Effect.gen(function*() {
          const { thread } = yield* agentWithThread({
            capabilities: { userInteraction: true },
            policies: { dataHandling: "strict" }
          })
          const { runId, parsed } = yield* send(
            thread.id,
            `/tool ask_question ${JSON.stringify(question)}\n/text went on`
          )
          const run = yield* getRun(runId)
          assert.strictEqual(run.status, "waiting_for_input")
          assert.strictEqual(run.config.dataHandling, "strict")
          const listed = yield* TestServer.request("GET", `/v1/interactions?runId=${runId}`)
          const page = yield* TestServer.expectOk(listed, 200, Schema.Struct({ data: Schema.Array(Interaction) }))
          return { runId, interactionId: page.data[0]?.id ?? "", lastEventId: String(parsed.ids.at(-1)) }
        }).pipe(Effect.provide(yield* serve(true)), Effect.scoped)

        // Restarted with that band no longer verified: answering resumes the run, which fails before inference.
        yield* Effect.gen(function*() {
          const answer = { inputResponses: [{ requestId: "go", optionId: "yes" }] }
          const resolved = yield* TestServer.request("POST", `/v1/interactions/${parked.interactionId}/resolve`, {
            body: answer
          })
          assert.strictEqual(resolved.status, 200, resolved.text)
          // Following from the park's last frame waits for the resumed run's end.
          const stream = yield* TestServer.request("GET", `/v1/runs/${parked.runId}/stream`, {
            headers: { "last-event-id": parked.lastEventId }
          })
          assert.include(
            stream.text,
            JSON.stringify({ type: "data-svc-terminal", data: { terminalReason: "data_handling_unavailable" } })
          )
          assert.notInclude(stream.text, "went on")
          const run = yield* getRun(parked.runId)
          assert.strictEqual(run.status, "failed")
          assert.strictEqual(run.terminalReason, "data_handling_unavailable")
          assert.strictEqual(run.error?.code, "strict_data_handling_unavailable")
        }).pipe(Effect.provide(yield* serve(false)), Effect.scoped)
      }).pipe(Effect.scoped),
    60_000
  )
})
