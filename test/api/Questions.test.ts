/**
 * Questions (spec 2.4, 3.1, 4.4): `ask_question` parks the run at
 * waiting_for_input with a question interaction; the answer (resolve, batch,
 * or a plain-text message) resumes it where it left off; rules 2-6 of 4.4;
 * cancelling a parked run; the max-park window on TestClock.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { Interaction } from "../../domain/Interaction.ts"
import { Page } from "../../domain/Page.ts"
import { Run, RunReceipt } from "../../domain/Run.ts"
import { Thread } from "../../domain/Thread.ts"
import { RunRecovery } from "../../src/runs/RunRecovery.ts"
import { agentWithThread, callIdsOf, getRun, send, streamOf, textOf } from "../support/Conversation.ts"
import * as TestServer from "../support/TestServer.ts"

const question = {
  title: "Pick a color",
  details: "For the banner",
  questions: [
    { id: "color", prompt: "Which color?", options: [{ id: "red", label: "Red" }, { id: "blue", label: "Blue" }] },
    { id: "note", prompt: "Anything else?", multiline: true }
  ],
  actions: [{ id: "skip", label: "Skip" }]
}
const ask = (q: unknown, after = "/text thanks") => `/tool ask_question ${JSON.stringify(q)}\n${after}`

/** A thread on an agent that may ask the user. */
const setup = Effect.map(agentWithThread({ capabilities: { userInteraction: true } }), ({ thread }) => thread)

/** Sends the message and reads its stream, which ends when the run parks. */
const park = (threadId: string, input: string) =>
  Effect.gen(function*() {
    const { runId, parsed } = yield* send(threadId, input)
    const list = yield* TestServer.expectOk(
      yield* TestServer.request("GET", `/v1/interactions?runId=${runId}`),
      200,
      Page(Interaction)
    )
    return { runId, parsed, interaction: list.data[0] }
  })

const resolve = (id: string, body: unknown) => TestServer.request("POST", `/v1/interactions/${id}/resolve`, { body })

// The max-park test runs the recovery pass itself: a background pass every 30 s of a 14-day jump is 40,320 passes.
TestServer.suite({ recoveryIntervalMs: 7 * 24 * 60 * 60 * 1000 })("questions", (it) => {
  it.effect("ask_question parks the run at waiting_for_input; the answer resumes it and the model sees it", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const thread = yield* setup
      const { runId, parsed, interaction } = yield* park(thread.id, ask(question))
      const requested = parsed.chunks.filter((c) => c.type === "data-svc-input-requested")
      assert.strictEqual(requested.length, 1)
      assert.deepStrictEqual(parsed.chunks.at(-1), { type: "finish", finishReason: "other" })
      assert.deepStrictEqual(requested[0], {
        type: "data-svc-input-requested",
        data: {
          interactionId: interaction.id,
          toolCallId: interaction.toolCallId,
          request: {
            kind: "question",
            title: "Pick a color",
            details: "For the banner",
            questions: [
              {
                id: "color",
                prompt: "Which color?",
                options: [{ id: "red", label: "Red" }, { id: "blue", label: "Blue" }],
                multiple: false,
                multiline: false,
                allowOther: false
              },
              { id: "note", prompt: "Anything else?", multiple: false, multiline: true, allowOther: false }
            ],
            actions: [{ id: "skip", label: "Skip" }]
          },
          expiresAt: interaction.expiresAt
        }
      })
      assert.match(interaction.id, /^tar_/)
      // The service's own tc_ id, the one the stream shows (spec 1).
      assert.deepStrictEqual(callIdsOf(parsed.chunks), [interaction.toolCallId])
      assert.strictEqual(interaction.kind, "question")
      assert.strictEqual(interaction.status, "pending")
      assert.strictEqual(interaction.toolName, "ask_question")
      assert.strictEqual(interaction.runId, runId)
      assert.strictEqual(interaction.rootRunId, runId)
      assert.strictEqual(interaction.workerRef, null)
      assert.strictEqual(interaction.hookId, null)
      assert.strictEqual(interaction.decision, null)
      assert.strictEqual(interaction.stepNumber, 1)
      // 2.4: input is approval only; a question carries none.
      const fetched = yield* api.request("GET", `/v1/interactions/${interaction.id}`)
      assert.strictEqual(fetched.status, 200)
      assert.isFalse(Object.hasOwn(Object(fetched.json), "input"))
      assert.deepStrictEqual(Object(fetched.json)["request"], interaction.request)
      assert.strictEqual(
        Date.parse(interaction.expiresAt ?? "") - Date.parse(interaction.createdAt),
        14 * 24 * 60 * 60 * 1000
      )
      const parked = yield* getRun(runId)
      assert.strictEqual(parked.status, "waiting_for_input")
      assert.deepStrictEqual(parked.queuedFollowups, [])
      assert.strictEqual(
        (yield* TestServer.expectOk(yield* api.request("GET", `/v1/threads/${thread.id}`), 200, Thread)).status,
        "running"
      )

      const answered = yield* TestServer.expectOk(
        yield* resolve(interaction.id, {
          inputResponses: [{ requestId: "color", optionId: "blue" }, { requestId: "note", text: "make it bold" }],
          reason: "brand colors"
        }),
        200,
        Interaction
      )
      assert.strictEqual(answered.status, "resolved")
      assert.strictEqual(answered.expiresAt, null)
      assert.strictEqual(answered.reason, "brand colors")
      assert.deepStrictEqual(answered.resolution, {
        inputResponses: [{ requestId: "color", optionId: "blue" }, { requestId: "note", text: "make it bold" }],
        reason: "brand colors"
      })
      assert.isNotNull(answered.resolvedAt)

      const full = yield* streamOf(runId)
      assert.strictEqual(textOf(full.message), "thanks")
      const output = full.chunks.find((c) => c.type === "tool-output-available")
      assert.deepStrictEqual(output, {
        type: "tool-output-available",
        toolCallId: interaction.toolCallId,
        output: answered.resolution
      })
      assert.deepStrictEqual(full.chunks.at(-1), { type: "finish", finishReason: "stop" })
      const done = yield* getRun(runId)
      assert.strictEqual(done.status, "completed")
      assert.isUndefined(done.queuedFollowups)

      // Same outcome again: 200; another outcome: 409.
      const same = yield* resolve(interaction.id, {
        inputResponses: [{ requestId: "color", optionId: "blue" }, { requestId: "note", text: "make it bold" }],
        reason: "brand colors"
      })
      assert.strictEqual(same.status, 200)
      yield* TestServer.expectError(
        yield* resolve(interaction.id, {
          inputResponses: [{ requestId: "color", optionId: "red" }, { requestId: "note", text: "x" }]
        }),
        409,
        "api_error",
        "idempotency_key_conflict"
      )
    }))

  it.effect("rules 2-4 of 4.4: inner ids only, one answer per id, options, multiple, free text, cancel", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const thread = yield* setup
      const multi = {
        title: "Choose",
        questions: [
          { id: "tags", prompt: "Tags?", options: [{ id: "a", label: "A" }, { id: "b", label: "B" }], multiple: true },
          { id: "one", prompt: "One?", options: [{ id: "x", label: "X" }, { id: "y", label: "Y" }], allowOther: true }
        ]
      }
      const { runId, interaction } = yield* park(thread.id, ask(multi))
      const bad = (body: unknown, message: RegExp) =>
        Effect.gen(function*() {
          const error = yield* TestServer.expectError(
            yield* resolve(interaction.id, body),
            400,
            "invalid_request_error",
            "invalid_request_error"
          )
          assert.match(error.message, message)
        })
      yield* bad(
        { inputResponses: [{ requestId: interaction.id, optionId: "a" }] },
        new RegExp(`Unknown question '${interaction.id}'`)
      )
      yield* bad(
        { inputResponses: [{ requestId: "tags", optionIds: ["a"] }, { requestId: "tags", optionIds: ["b"] }] },
        /more than once/
      )
      yield* bad({
        inputResponses: [{ requestId: "one", optionIds: ["x", "y"] }, { requestId: "tags", optionIds: ["a"] }]
      }, /takes one option/)
      yield* bad(
        { inputResponses: [{ requestId: "tags", optionIds: ["c"] }, { requestId: "one", optionId: "x" }] },
        /has no option 'c'/
      )
      yield* bad(
        { inputResponses: [{ requestId: "tags", text: "free" }, { requestId: "one", optionId: "x" }] },
        /does not take free text/
      )
      yield* bad({ inputResponses: [{ requestId: "tags", optionIds: ["a"] }] }, /Question 'one' needs an answer/)
      yield* bad({ cancel: true, inputResponses: [{ requestId: "tags", optionIds: ["a"] }] }, /either cancel/)
      yield* TestServer.expectError(
        yield* resolve("tar_nope", { cancel: true }),
        404,
        "not_found",
        "interaction_not_found"
      )
      yield* TestServer.expectError(
        yield* api.request("POST", `/v1/interactions/${interaction.id}/resolve`, {
          body: { cancel: true },
          key: TestServer.Keys.b
        }),
        403,
        "permission_error",
        "permission_denied"
      )
      assert.strictEqual((yield* getRun(runId)).status, "waiting_for_input")
      const ok = yield* TestServer.expectOk(
        yield* resolve(interaction.id, {
          inputResponses: [{ requestId: "tags", optionIds: ["a", "b"] }, { requestId: "one", text: "z" }]
        }),
        200,
        Interaction
      )
      assert.strictEqual(ok.status, "resolved")
      yield* streamOf(runId)
      assert.strictEqual((yield* getRun(runId)).status, "completed")

      // cancel: true abandons the question; the run goes on and the model is told.
      const again = yield* park(thread.id, ask(multi))
      const cancelled = yield* TestServer.expectOk(
        yield* resolve(again.interaction.id, { cancel: true }),
        200,
        Interaction
      )
      assert.strictEqual(cancelled.status, "cancelled")
      assert.strictEqual(cancelled.decision, null)
      const after = yield* streamOf(again.runId)
      assert.deepStrictEqual(after.chunks.find((c) => c.type === "tool-output-available"), {
        type: "tool-output-available",
        toolCallId: again.interaction.toolCallId,
        output: { dismissed: true }
      })
      assert.strictEqual((yield* getRun(again.runId)).status, "completed")
    }))

  it.effect("a plain-text message answers a lone free-text question: 409 thread_busy with resolved_interaction_id", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const thread = yield* setup
      const { runId, interaction } = yield* park(
        thread.id,
        ask({ title: "Name?", questions: [{ id: "name", prompt: "Your name?" }] })
      )
      const reply = yield* api.request("POST", `/v1/threads/${thread.id}/messages`, {
        body: { input: "Ada" },
        headers: { accept: "application/json" }
      })
      const busy = yield* TestServer.expectError(reply, 409, "api_error", "thread_busy")
      assert.deepStrictEqual(busy.details, { active_run_id: runId, resolved_interaction_id: interaction.id })
      const settled = yield* TestServer.expectOk(
        yield* api.request("GET", `/v1/interactions/${interaction.id}`),
        200,
        Interaction
      )
      assert.deepStrictEqual(settled.resolution, { inputResponses: [{ requestId: "name", text: "Ada" }] })
      yield* streamOf(runId)
      assert.strictEqual((yield* getRun(runId)).status, "completed")
    }))

  it.effect("batch resolve: each item independent with its own status; unresolved siblings keep the run parked", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const thread = yield* setup
      const input = `${ask({ title: "A?", questions: [{ id: "a", prompt: "A?" }] }, "")}\n/tool ask_question ${
        JSON.stringify({ title: "B?", questions: [{ id: "b", prompt: "B?" }] })
      }`
      // Two questions in two steps would park twice; put both calls in one step by asking twice in the same directive set.
      const first = yield* park(thread.id, input)
      const reply = yield* api.request("POST", `/v1/runs/${first.runId}/interactions/resolve`, {
        body: {
          items: [
            { id: first.interaction.id, inputResponses: [{ requestId: "zzz", text: "no" }] },
            { id: "tar_unknown", cancel: true }
          ]
        }
      })
      assert.strictEqual(reply.status, 200)
      assert.deepStrictEqual(reply.json, {
        items: [{ id: first.interaction.id, status: "invalid_body" }, { id: "tar_unknown", status: "not_found" }]
      })
      assert.strictEqual((yield* getRun(first.runId)).status, "waiting_for_input")
      const good = yield* api.request("POST", `/v1/runs/${first.runId}/interactions/resolve`, {
        body: { items: [{ id: first.interaction.id, inputResponses: [{ requestId: "a", text: "yes" }] }] }
      })
      assert.deepStrictEqual(good.json, { items: [{ id: first.interaction.id, status: "resolved" }] })
      const repeat = yield* api.request("POST", `/v1/runs/${first.runId}/interactions/resolve`, {
        body: {
          items: [{ id: first.interaction.id, inputResponses: [{ requestId: "a", text: "yes" }] }, {
            id: first.interaction.id,
            cancel: true
          }]
        }
      })
      assert.deepStrictEqual(repeat.json, {
        items: [{ id: first.interaction.id, status: "already_resolved" }, {
          id: first.interaction.id,
          status: "conflict"
        }]
      })
      const tooMany = yield* api.request("POST", `/v1/runs/${first.runId}/interactions/resolve`, {
        body: { items: Array.from({ length: 21 }, (_, i) => ({ id: `tar_${i}`, cancel: true })) }
      })
      yield* TestServer.expectError(tooMany, 400, "invalid_request_error", "invalid_request_error")
    }))

  it.effect("cancelling a parked run cancels its pending interactions (expiresAt null) and frees the thread", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const thread = yield* setup
      const { runId, interaction } = yield* park(thread.id, ask(question))
      const cancelled = yield* TestServer.expectOk(yield* api.request("POST", `/v1/runs/${runId}/cancel`), 200, Run)
      assert.strictEqual(cancelled.status, "cancelled")
      const after = yield* TestServer.expectOk(
        yield* api.request("GET", `/v1/interactions/${interaction.id}`),
        200,
        Interaction
      )
      assert.strictEqual(after.status, "cancelled")
      assert.strictEqual(after.expiresAt, null)
      const stream = yield* streamOf(runId)
      assert.deepStrictEqual(stream.chunks.at(-1), { type: "abort", reason: "cancelled" })
      assert.strictEqual(
        (yield* TestServer.expectOk(yield* api.request("GET", `/v1/threads/${thread.id}`), 200, Thread)).status,
        "idle"
      )
      // Resolving after the run ended: 200, the record is finalized, nothing resumes.
      const late = yield* resolve(interaction.id, { cancel: true })
      assert.strictEqual(late.status, 200)
    }))

  it.effect("past the max-park window (14 days) the run is cancelled with interaction_timeout (TestClock)", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const recovery = yield* RunRecovery
      const thread = yield* setup
      const { runId, interaction } = yield* park(thread.id, ask(question))
      yield* TestClock.adjust("13 days")
      yield* recovery.pass
      assert.strictEqual((yield* getRun(runId)).status, "waiting_for_input")
      yield* TestClock.adjust("1 day")
      yield* recovery.pass
      const expired = yield* getRun(runId)
      assert.strictEqual(expired.status, "cancelled")
      assert.strictEqual(expired.terminalReason, "interaction_timeout")
      const after = yield* TestServer.expectOk(
        yield* api.request("GET", `/v1/interactions/${interaction.id}`),
        200,
        Interaction
      )
      assert.strictEqual(after.status, "cancelled")
      assert.strictEqual(after.expiresAt, null)
      const stream = yield* streamOf(runId)
      assert.deepStrictEqual(stream.chunks.slice(-2), [
        { type: "data-svc-usage", data: expired.usage },
        { type: "abort", reason: "interaction_timeout" }
      ])
      assert.strictEqual(
        (yield* TestServer.expectOk(yield* api.request("GET", `/v1/threads/${thread.id}`), 200, Thread)).status,
        "idle"
      )
      const receipt = yield* TestServer.expectOk(
        yield* api.request("POST", `/v1/threads/${thread.id}/messages`, {
          body: { input: "hi" },
          headers: { accept: "application/json" }
        }),
        200,
        RunReceipt
      )
      assert.strictEqual(receipt.status, "queued")
    }))
})
