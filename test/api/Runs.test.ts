/**
 * Runs over a real HTTP listener on real PostgreSQL, with a real MCP peer:
 * streams parsed and folded by the `ai` package, replay and Last-Event-ID,
 * tool calls, busy threads and held follow-ups, cancellation, caps on
 * TestClock, structured output, reasoning, strict data handling and the
 * Run resource.
 */
import { assert } from "@effect/vitest"
import { Effect, Fiber, Schema } from "effect"
import { TestClock } from "effect/testing"
import { Page } from "../../domain/Page.ts"
import { Run, RunReceipt } from "../../domain/Run.ts"
import { Thread } from "../../domain/Thread.ts"
import { introduction } from "../../src/model/ScriptedModel.ts"
import * as Collection from "../support/Collection.ts"
import { agentWithThread, callIdsOf, firstDataOf, getRun, startRun, streamOf, textOf } from "../support/Conversation.ts"
import { gateServer } from "../support/GateMcpServer.ts"
import * as TestServer from "../support/TestServer.ts"
import { frames, parseWithAi } from "../support/UiStream.ts"

const json = { accept: "application/json" }

const types = (chunks: ReadonlyArray<{ readonly type: string }>) => chunks.map((c) => c.type)

TestServer.suite()("runs", (it) => {
  it.effect("a message streams its run: SSE frames with ordered ids, headers, start.messageId = run id; the ai package folds it", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const { thread } = yield* agentWithThread({ context: "Be brief." })
      const reply = yield* api.request("POST", `/v1/threads/${thread.id}/messages`, { body: { input: "hello" } })
      assert.strictEqual(reply.status, 200)
      assert.strictEqual(reply.headers.get("content-type"), "text/event-stream")
      assert.strictEqual(reply.headers.get("x-vercel-ai-ui-message-stream"), "v1")
      const runId = reply.headers.get("svc-run-id") ?? ""
      assert.match(runId, /^run_[0-9A-Za-z]{22}$/)
      const parsed = yield* Effect.orDie(parseWithAi(reply.text))
      assert.deepStrictEqual(types(parsed.chunks), [
        "start",
        "start-step",
        "text-start",
        // A word a delta: the introduction's 22, then `Echo: ` and `hello`.
        ...Array.from({ length: 24 }, () => "text-delta"),
        "text-end",
        "finish-step",
        "data-svc-terminal",
        "data-svc-usage",
        "finish"
      ])
      assert.deepStrictEqual(parsed.chunks[0], { type: "start", messageId: runId })
      assert.deepStrictEqual(parsed.ids, parsed.chunks.map((_, i) => i + 1))
      assert.strictEqual(frames(reply.text).at(-1)?.data, "[DONE]")
      assert.strictEqual(parsed.message?.id, runId)
      assert.strictEqual(textOf(parsed.message), `${introduction}\n\nEcho: hello`)
      assert.deepStrictEqual(firstDataOf(parsed.chunks, "data-svc-terminal"), { terminalReason: null })
      assert.deepStrictEqual(parsed.chunks.at(-1), { type: "finish", finishReason: "stop" })

      const run = yield* getRun(runId)
      assert.strictEqual(run.status, "completed")
      assert.strictEqual(run.terminalReason, null)
      assert.deepStrictEqual(firstDataOf(parsed.chunks, "data-svc-usage"), run.usage)
      assert.strictEqual(run.usage?.steps, 1)
      assert.deepStrictEqual(run.config, {
        band: "core",
        mediaFidelity: "standard",
        dataHandling: "standard",
        timeZone: "UTC"
      })
      assert.isNotNull(run.startedAt)
      assert.isNotNull(run.completedAt)
      const after = yield* TestServer.expectOk(yield* api.request("GET", `/v1/threads/${thread.id}`), 200, Thread)
      assert.strictEqual(after.status, "idle")
    }))

  it.effect("Accept: application/json answers a RunReceipt; the stream replays a finished run; Last-Event-ID resumes without gap or duplicate", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const { agent, thread } = yield* agentWithThread()
      const receipt = yield* startRun(thread.id, { input: "/tool nothing {}\n/text ok" })
      assert.strictEqual(receipt.threadId, thread.id)
      assert.strictEqual(receipt.agentId, agent.id)
      assert.strictEqual(receipt.organizationId, "org_acme")
      assert.strictEqual(receipt.status, "queued")
      const full = yield* streamOf(receipt.runId)
      assert.deepStrictEqual(full.ids, full.chunks.map((_, i) => i + 1))
      const again = yield* streamOf(receipt.runId)
      assert.strictEqual(again.reply.text, full.reply.text)
      const resumed = yield* streamOf(receipt.runId, "5")
      assert.deepStrictEqual(resumed.ids, full.ids.slice(5))
      assert.deepStrictEqual(frames(resumed.reply.text).slice(0, -1), frames(full.reply.text).slice(5, -1))
      // A client cut off right after the last frame resumes to an empty stream that ends at once.
      const last = String(full.ids.at(-1))
      const atEnd = yield* streamOf(receipt.runId, last)
      assert.deepStrictEqual(atEnd.ids, [])
      assert.deepStrictEqual(frames(atEnd.reply.text).map((f) => f.data), ["[DONE]"])
      const bad = yield* api.request("GET", `/v1/runs/${receipt.runId}/stream`, { headers: { "last-event-id": "abc" } })
      yield* TestServer.expectError(bad, 400, "invalid_request_error", "invalid_request_error")
      yield* TestServer.expectError(
        yield* api.request("GET", "/v1/runs/run_nope/stream"),
        404,
        "not_found",
        "run_not_found"
      )
    }))

  it.effect("POST /v1/runs starts a run; unknown thread is 404, another workspace's thread 403", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const { thread } = yield* agentWithThread()
      const receipt = yield* TestServer.expectOk(
        yield* api.request("POST", "/v1/runs", { body: { threadId: thread.id, input: { text: "hi" } } }),
        200,
        RunReceipt
      )
      const done = yield* streamOf(receipt.runId)
      assert.strictEqual(textOf(done.message), `${introduction}\n\nEcho: hi`)
      yield* TestServer.expectError(
        yield* api.request("POST", "/v1/runs", { body: { threadId: "thread_nope", input: "x" } }),
        404,
        "not_found",
        "thread_not_found"
      )
      yield* TestServer.expectError(
        yield* api.request("POST", "/v1/runs", { body: { threadId: thread.id, input: "x" }, key: TestServer.Keys.b }),
        403,
        "permission_error",
        "permission_denied"
      )
      yield* TestServer.expectError(
        yield* api.request("POST", "/v1/runs", { body: { threadId: thread.id, input: { attachments: [] } } }),
        400,
        "invalid_request_error",
        "invalid_request_error"
      )
    }))

  it.effect("MCP tools: calls reach the server with Svc-Run-Id / Svc-Root-Run-Id; an isError result and an unknown tool are tool-output-available with output.type 'tool-output-error', and the run goes on", () =>
    Effect.gen(function*() {
      const gate = yield* gateServer
      const server = yield* Collection.toolServers.create({ name: "gate1", transport: "http", url: gate.url })
      const { thread } = yield* agentWithThread({ capabilities: { mcp: { toolServerIds: [server.id] } } })
      const receipt = yield* startRun(thread.id, {
        input:
          "/tool mcp__gate1__echo {\"text\":\"hi\"}\n/tool mcp__gate1__fail {}\n/tool missing_tool {}\n/text all done"
      })
      const { chunks, message } = yield* streamOf(receipt.runId)
      // Each call under the service's own tc_ id, not the model's (spec 1).
      const [echoId, failId, missingId] = callIdsOf(chunks)
      assert.strictEqual(new Set([echoId, failId, missingId]).size, 3)
      assert.deepStrictEqual(
        chunks.filter((c) => c.type.startsWith("tool-")),
        [
          { type: "tool-input-start", toolCallId: echoId, toolName: "mcp__gate1__echo" },
          { type: "tool-input-available", toolCallId: echoId, toolName: "mcp__gate1__echo", input: { text: "hi" } },
          { type: "tool-output-available", toolCallId: echoId, output: [{ type: "text", text: "hi" }] },
          { type: "tool-input-start", toolCallId: failId, toolName: "mcp__gate1__fail" },
          { type: "tool-input-available", toolCallId: failId, toolName: "mcp__gate1__fail", input: {} },
          {
            type: "tool-output-available",
            toolCallId: failId,
            output: { type: "tool-output-error", error: { code: "tool_error", message: "it failed" } }
          },
          { type: "tool-input-start", toolCallId: missingId, toolName: "missing_tool" },
          { type: "tool-input-available", toolCallId: missingId, toolName: "missing_tool", input: {} },
          {
            type: "tool-output-available",
            toolCallId: missingId,
            output: {
              type: "tool-output-error",
              error: { code: "unknown_tool", message: "there is no tool named 'missing_tool'." }
            }
          }
        ]
      )
      // The ai package folds an expected failure as a finished call whose output is the failure.
      const failed = message?.parts.find((p) => "toolCallId" in p && p.toolCallId === failId)
      assert.deepInclude(failed, {
        state: "output-available",
        output: { type: "tool-output-error", error: { code: "tool_error", message: "it failed" } }
      })
      assert.strictEqual(textOf(message), "all done")
      const run = yield* getRun(receipt.runId)
      assert.strictEqual(run.status, "completed")
      assert.strictEqual(run.usage?.steps, 4)
      const posts = gate.headers().filter((h) => h["svc-run-id"] !== undefined)
      assert.isAbove(posts.length, 0)
      for (const h of posts) {
        assert.strictEqual(h["svc-run-id"], receipt.runId)
        assert.strictEqual(h["svc-root-run-id"], receipt.runId)
      }
    }).pipe(Effect.scoped))

  it.effect("MCP tools share the tool policy: defer false sends the schema, requiredSkills waits for load_skill, resultCapBytes cuts the result", () =>
    Effect.gen(function*() {
      const gate = yield* gateServer
      const server = yield* Collection.toolServers.create({
        name: "gate8",
        transport: "http",
        url: gate.url,
        defer: false,
        requiredSkills: "echoing",
        resultCapBytes: 1_024,
        allowedTools: ["echo"]
      })
      const skills = [{ name: "echoing", description: "Echo things", body: "Echo carefully." }]
      const { thread } = yield* agentWithThread({ capabilities: { mcp: { toolServerIds: [server.id] }, skills } })
      const shown = yield* streamOf((yield* startRun(thread.id, { input: "/show-tools" })).runId)
      const offered = JSON.parse(textOf(shown.message)) as ReadonlyArray<
        { readonly name: string; readonly inputSchema: Record<string, unknown> }
      >
      assert.deepStrictEqual(offered.map((t) => t.name), ["mcp__gate8__echo", "load_skill"])
      assert.deepStrictEqual(Object.keys(offered[0].inputSchema["properties"] as object), ["text"])

      const early = yield* streamOf(
        (yield* startRun(thread.id, { input: "/tool mcp__gate8__echo {\"text\":\"hi\"}" })).runId
      )
      assert.deepStrictEqual(early.chunks.filter((c) => c.type === "tool-output-available"), [
        {
          type: "tool-output-available",
          toolCallId: callIdsOf(early.chunks)[0],
          output: {
            type: "tool-output-error",
            error: {
              code: "skill_required",
              message: "'mcp__gate8__echo' can only be used after loading the skill 'echoing' with load_skill."
            }
          }
        }
      ])
      // The model read the failure as `code: message` (the scripted model answers with the last result).
      assert.strictEqual(
        textOf(early.message),
        "Result: skill_required: 'mcp__gate8__echo' can only be used after loading the skill 'echoing' with load_skill."
      )

      const long = "x".repeat(3_000)
      const calls = [{ name: "load_skill", input: { name: "echoing" } }, {
        name: "mcp__gate8__echo",
        input: { text: long }
      }]
      const capped = yield* streamOf((yield* startRun(thread.id, { input: `/tools ${JSON.stringify(calls)}` })).runId)
      const echoCall = callIdsOf(capped.chunks)[1]
      assert.deepStrictEqual(firstDataOf(capped.chunks, "data-svc-tool-result-overflow"), {
        toolCallId: echoCall,
        toolName: "mcp__gate8__echo",
        bytes: 3_000,
        capBytes: 1_024,
        recovery: "none"
      })
      assert.deepStrictEqual(
        capped.chunks.find((c) => c.type === "tool-output-available" && c.toolCallId === echoCall),
        { type: "tool-output-available", toolCallId: echoCall, output: { truncated: true, head: "x".repeat(1_024) } }
      )
    }))
  it.effect("busy thread: 409 thread_busy; plain text is held, listed, withdrawable, then delivered at the next turn boundary", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const gate = yield* gateServer
      const server = yield* Collection.toolServers.create({ name: "gate2", transport: "http", url: gate.url })
      const { thread } = yield* agentWithThread({ capabilities: { mcp: { toolServerIds: [server.id] } } })
      const receipt = yield* startRun(thread.id, { input: "/tool mcp__gate2__wait {}" })
      yield* gate.waiting

      const withOptions = yield* api.request("POST", `/v1/threads/${thread.id}/messages`, {
        body: { input: "not plain", maxSteps: 3 },
        headers: json
      })
      const busy = yield* TestServer.expectError(withOptions, 409, "api_error", "thread_busy")
      assert.deepStrictEqual(busy.details, { active_run_id: receipt.runId })
      // Metadata belongs to a run; a held message would lose it, so such a message is not held.
      const withMetadata = yield* api.request("POST", `/v1/threads/${thread.id}/messages`, {
        body: { input: "tagged", metadata: { source: "cli" } },
        headers: json
      })
      assert.deepStrictEqual((yield* TestServer.expectError(withMetadata, 409, "api_error", "thread_busy")).details, {
        active_run_id: receipt.runId
      })

      const first = yield* TestServer.expectError(
        yield* api.request("POST", `/v1/threads/${thread.id}/messages`, {
          body: { input: "withdraw me" },
          headers: json
        }),
        409,
        "api_error",
        "thread_busy"
      )
      const firstId = String(first.details?.["followup_id"])
      assert.deepStrictEqual(first.details, { active_run_id: receipt.runId, queued: true, followup_id: firstId })
      assert.match(firstId, /^fu_/)
      const second = yield* TestServer.expectError(
        yield* api.request("POST", "/v1/runs", { body: { threadId: thread.id, input: { text: "thanks" } } }),
        409,
        "api_error",
        "thread_busy"
      )
      const secondId = String(second.details?.["followup_id"])
      // A retry with the same Idempotency-Key answers the same 409 and holds nothing twice.
      for (let attempt = 0; attempt < 2; attempt++) {
        const keyed = yield* api.request("POST", `/v1/threads/${thread.id}/messages`, {
          body: { input: "only once" },
          headers: { ...json, "idempotency-key": "hold-once" }
        })
        const error = yield* TestServer.expectError(keyed, 409, "api_error", "thread_busy")
        assert.strictEqual(error.details?.["queued"], true)
        assert.strictEqual(
          (yield* getRun(receipt.runId)).queuedFollowups?.filter((f) => f.text === "only once").length,
          1
        )
      }
      const onceId = (yield* getRun(receipt.runId)).queuedFollowups?.find((f) => f.text === "only once")?.id ?? ""
      yield* TestServer.expectOk(
        yield* api.request("DELETE", `/v1/runs/${receipt.runId}/followups/${onceId}`),
        200,
        Schema.Unknown
      )

      const running = yield* getRun(receipt.runId)
      assert.strictEqual(running.status, "running")
      assert.deepStrictEqual(running.queuedFollowups?.map((f) => [f.id, f.text]), [[firstId, "withdraw me"], [
        secondId,
        "thanks"
      ]])

      const withdrawn = yield* api.request("DELETE", `/v1/runs/${receipt.runId}/followups/${firstId}`)
      assert.strictEqual(withdrawn.status, 200)
      assert.deepStrictEqual(withdrawn.json, { id: firstId, object: "run.followup", deleted: true })
      yield* TestServer.expectError(
        yield* api.request("DELETE", `/v1/runs/${receipt.runId}/followups/${firstId}`),
        404,
        "not_found",
        "followup_not_found"
      )

      yield* gate.open
      const { chunks, message } = yield* streamOf(receipt.runId)
      assert.deepStrictEqual(chunks.filter((c) => c.type === "data-svc-followup-replayed"), [
        { type: "data-svc-followup-replayed", data: { followupId: secondId, text: "thanks" } }
      ])
      assert.strictEqual(textOf(message), "Echo: thanks")
      const done = yield* getRun(receipt.runId)
      assert.strictEqual(done.status, "completed")
      assert.isUndefined(done.queuedFollowups)
      yield* TestServer.expectError(
        yield* api.request("DELETE", `/v1/runs/${receipt.runId}/followups/${secondId}`),
        404,
        "not_found",
        "followup_not_found"
      )
    }).pipe(Effect.scoped))

  it.effect("a held follow-up is listed by a GET made right after the 409 (30 times: running, just started, parked); a parked run lists [] when none are held", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const gate = yield* gateServer
      const server = yield* Collection.toolServers.create({
        name: "gate12",
        transport: "http",
        url: gate.url,
        approval: "always",
        gatedTools: ["echo"]
      })
      const { thread } = yield* agentWithThread({ capabilities: { mcp: { toolServerIds: [server.id] } } })
      /** Sends `text` to the busy thread and GETs `runId` at once: the follow-up the 409 names is listed, last. */
      const holdAndSee = (runId: string, text: string) =>
        Effect.gen(function*() {
          const busy = yield* TestServer.expectError(
            yield* api.request("POST", `/v1/threads/${thread.id}/messages`, { body: { input: text }, headers: json }),
            409,
            "api_error",
            "thread_busy"
          )
          assert.deepStrictEqual(busy.details, {
            active_run_id: runId,
            queued: true,
            followup_id: busy.details?.["followup_id"]
          })
          const run = yield* getRun(runId)
          assert.deepStrictEqual(run.queuedFollowups?.at(-1), {
            id: busy.details?.["followup_id"],
            text,
            queuedAt: run.queuedFollowups?.at(-1)?.queuedAt
          })
        })

      // Right after the start (the run may still be queued), then while it runs.
      const running = yield* startRun(thread.id, { input: "/tool mcp__gate12__wait {}" })
      yield* holdAndSee(running.runId, "first")
      yield* gate.waiting
      for (let i = 0; i < 30; i++) yield* holdAndSee(running.runId, `running ${i}`)
      assert.strictEqual((yield* getRun(running.runId)).queuedFollowups?.length, 31)
      yield* TestServer.expectOk(yield* api.request("POST", `/v1/runs/${running.runId}/cancel`), 200, Run)

      // Parked on an approval: [] while nothing is held, on GET and on the list.
      const parked = yield* startRun(thread.id, { input: "/tool mcp__gate12__echo {\"text\":\"x\"}" })
      yield* streamOf(parked.runId)
      const waiting = yield* getRun(parked.runId)
      assert.strictEqual(waiting.status, "waiting_for_approval")
      assert.deepStrictEqual(waiting.queuedFollowups, [])
      const listed = yield* TestServer.expectOk(
        yield* api.request("GET", `/v1/runs?threadId=${thread.id}&status=waiting_for_approval`),
        200,
        Page(Run)
      )
      assert.deepStrictEqual(listed.data.map((r) => r.queuedFollowups), [[]])
      for (let i = 0; i < 30; i++) yield* holdAndSee(parked.runId, `parked ${i}`)
      assert.strictEqual((yield* getRun(parked.runId)).queuedFollowups?.length, 30)
    }).pipe(Effect.scoped))

  it.effect("cancel interrupts the run: cancelled, stream ends with abort, thread freed; cancel again returns the final state", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const gate = yield* gateServer
      const server = yield* Collection.toolServers.create({ name: "gate3", transport: "http", url: gate.url })
      const { thread } = yield* agentWithThread({ capabilities: { mcp: { toolServerIds: [server.id] } } })
      const receipt = yield* startRun(thread.id, { input: "/tool mcp__gate3__wait {}" })
      yield* gate.waiting
      const held = yield* TestServer.expectError(
        yield* api.request("POST", `/v1/threads/${thread.id}/messages`, { body: { input: "later" }, headers: json }),
        409,
        "api_error",
        "thread_busy"
      )
      const cancelled = yield* TestServer.expectOk(
        yield* api.request("POST", `/v1/runs/${receipt.runId}/cancel`),
        200,
        Run
      )
      assert.strictEqual(cancelled.status, "cancelled")
      assert.deepStrictEqual(cancelled.queuedFollowups?.map((f) => f.id), [held.details?.["followup_id"]])
      const { chunks } = yield* streamOf(receipt.runId)
      assert.deepStrictEqual(chunks.at(-1), { type: "abort", reason: "cancelled" })
      const again = yield* TestServer.expectOk(yield* api.request("POST", `/v1/runs/${receipt.runId}/cancel`), 200, Run)
      assert.deepStrictEqual(again, cancelled)
      const freed = yield* TestServer.expectOk(yield* api.request("GET", `/v1/threads/${thread.id}`), 200, Thread)
      assert.strictEqual(freed.status, "idle")
      const noop = yield* api.request("POST", `/v1/threads/${thread.id}/cancel`)
      assert.deepStrictEqual(noop.json, { id: thread.id, object: "thread.cancel", cancelledRunId: null })
    }).pipe(Effect.scoped))

  it.effect("thread cancel cancels the active run", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const gate = yield* gateServer
      const server = yield* Collection.toolServers.create({ name: "gate4", transport: "http", url: gate.url })
      const { thread } = yield* agentWithThread({ capabilities: { mcp: { toolServerIds: [server.id] } } })
      const receipt = yield* startRun(thread.id, { input: "/tool mcp__gate4__wait {}" })
      yield* gate.waiting
      const reply = yield* api.request("POST", `/v1/threads/${thread.id}/cancel`)
      assert.deepStrictEqual(reply.json, { id: thread.id, object: "thread.cancel", cancelledRunId: receipt.runId })
      assert.strictEqual((yield* getRun(receipt.runId)).status, "cancelled")
    }).pipe(Effect.scoped))

  it.effect("deleting a thread or an agent with an active run cancels the run first", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const gate = yield* gateServer
      const server = yield* Collection.toolServers.create({ name: "gate7", transport: "http", url: gate.url })
      const { agent, thread } = yield* agentWithThread({ capabilities: { mcp: { toolServerIds: [server.id] } } })
      const first = yield* startRun(thread.id, { input: "/tool mcp__gate7__wait {}" })
      yield* gate.waiting
      const deleted = yield* api.request("DELETE", `/v1/threads/${thread.id}`)
      assert.deepStrictEqual(deleted.json, { id: thread.id, object: "thread", deleted: true })
      yield* TestServer.expectError(
        yield* api.request("GET", `/v1/runs/${first.runId}`),
        404,
        "not_found",
        "run_not_found"
      )

      const other = yield* Collection.threads.create({ agentId: agent.id })
      const second = yield* startRun(other.id, { input: "/tool mcp__gate7__wait {}" })
      const streaming = yield* Effect.forkChild(api.request("GET", `/v1/runs/${second.runId}/stream`))
      const gone = yield* api.request("DELETE", `/v1/agents/${agent.id}`)
      assert.strictEqual(gone.status, 200)
      const stream = yield* Effect.orDie(parseWithAi((yield* Fiber.join(streaming)).text))
      assert.deepStrictEqual(stream.chunks.at(-1), { type: "abort", reason: "cancelled" })
    }).pipe(Effect.scoped))

  it.effect("maxSteps stops the run cleanly with max_steps_exceeded", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread()
      const receipt = yield* startRun(thread.id, { input: "/steps 5", maxSteps: 2 })
      const { chunks } = yield* streamOf(receipt.runId)
      assert.deepStrictEqual(firstDataOf(chunks, "data-svc-terminal"), { terminalReason: "max_steps_exceeded" })
      const run = yield* getRun(receipt.runId)
      assert.strictEqual(run.status, "completed")
      assert.strictEqual(run.terminalReason, "max_steps_exceeded")
      assert.strictEqual(run.usage?.steps, 2)
    }))

  it.effect("the agent's maxStepsDefault applies when the run sets none", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({ policies: { maxStepsDefault: 3 } })
      const receipt = yield* startRun(thread.id, { input: "/steps 10" })
      yield* streamOf(receipt.runId)
      const run = yield* getRun(receipt.runId)
      assert.strictEqual(run.terminalReason, "max_steps_exceeded")
      assert.strictEqual(run.usage?.steps, 3)
    }))

  it.effect("maxDurationMs on TestClock: a run blocked in a tool ends with max_duration_exceeded exactly at the deadline", () =>
    Effect.gen(function*() {
      const gate = yield* gateServer
      const server = yield* Collection.toolServers.create({ name: "gate5", transport: "http", url: gate.url })
      const { thread } = yield* agentWithThread({ capabilities: { mcp: { toolServerIds: [server.id] } } })
      const receipt = yield* startRun(thread.id, { input: "/tool mcp__gate5__wait {}", maxDurationMs: 5000 })
      yield* gate.waiting
      yield* TestClock.adjust("4999 millis")
      assert.strictEqual((yield* getRun(receipt.runId)).status, "running")
      yield* TestClock.adjust("1 millis")
      const { chunks } = yield* streamOf(receipt.runId)
      assert.deepStrictEqual(firstDataOf(chunks, "data-svc-terminal"), { terminalReason: "max_duration_exceeded" })
      const run = yield* getRun(receipt.runId)
      assert.strictEqual(run.status, "completed")
      assert.strictEqual(run.terminalReason, "max_duration_exceeded")
    }).pipe(Effect.scoped))

  it.effect("outputSchema: the structured value is on data-svc-terminal; a non-matching answer leaves output undefined; an invalid schema is 400", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const { thread } = yield* agentWithThread()
      const schema = { type: "object", properties: { a: { type: "number" } }, required: ["a"] }
      const good = yield* startRun(thread.id, { input: "/output {\"a\":1}", outputSchema: schema })
      const goodStream = yield* streamOf(good.runId)
      assert.deepStrictEqual(firstDataOf(goodStream.chunks, "data-svc-terminal"), {
        terminalReason: null,
        output: { a: 1 }
      })
      const bad = yield* startRun(thread.id, { input: "/output {\"a\":\"x\"}", outputSchema: schema })
      const badStream = yield* streamOf(bad.runId)
      assert.deepStrictEqual(firstDataOf(badStream.chunks, "data-svc-terminal"), { terminalReason: null })
      assert.isTrue(badStream.chunks.some((c) => c.type === "error"))
      const invalid = yield* api.request("POST", `/v1/threads/${thread.id}/messages`, {
        body: { input: "x", outputSchema: { type: "nonsense" } },
        headers: json
      })
      const error = yield* TestServer.expectError(invalid, 400, "invalid_request_error", "invalid_request_error")
      assert.strictEqual(error.details?.["field"], "outputSchema")
    }))

  it.effect("streamReasoning emits reasoning parts; without it none are streamed", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread()
      const on = yield* startRun(thread.id, { input: "/reason let me think\n/text done", streamReasoning: true })
      const withReasoning = yield* streamOf(on.runId)
      assert.deepStrictEqual(types(withReasoning.chunks).filter((t) => t.startsWith("reasoning")), [
        "reasoning-start",
        "reasoning-delta",
        "reasoning-delta",
        "reasoning-delta",
        "reasoning-end"
      ])
      const off = yield* startRun(thread.id, { input: "/reason let me think\n/text done" })
      const without = yield* streamOf(off.runId)
      assert.isFalse(types(without.chunks).some((t) => t.startsWith("reasoning")))
    }))

  it.effect("streamProgress emits data-svc-progress snapshots under one stable id, replaced in place; without it none", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread()
      const on = yield* startRun(thread.id, { input: "/tool nothing {}\n/text ok", streamProgress: true })
      const { chunks, message } = yield* streamOf(on.runId)
      const progress = chunks.filter((c) => c.type === "data-svc-progress")
      assert.deepStrictEqual(progress.map((c) => ("data" in c ? c.data : undefined)), [
        { kind: "activity", summaryAvailable: false, text: "Thinking" },
        { kind: "activity", summaryAvailable: false, text: "Working: nothing" },
        { kind: "activity", summaryAvailable: false, text: "Thinking" }
      ])
      assert.deepStrictEqual([...new Set(progress.map((c) => ("id" in c ? c.id : undefined)))], [
        `progress_${on.runId}`
      ])
      assert.strictEqual(message?.parts.filter((p) => p.type === "data-svc-progress").length, 1)
      const off = yield* startRun(thread.id, { input: "/tool nothing {}\n/text ok" })
      const without = yield* streamOf(off.runId)
      assert.isFalse(types(without.chunks).includes("data-svc-progress"))
    }))

  it.effect("the model provider failing ends the run failed with upstream_unavailable and terminalReason null", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread()
      const receipt = yield* startRun(thread.id, { input: "/fail" })
      const { chunks } = yield* streamOf(receipt.runId)
      assert.deepStrictEqual(types(chunks).slice(-4), ["error", "data-svc-terminal", "data-svc-usage", "finish"])
      assert.deepStrictEqual(chunks.at(-1), { type: "finish", finishReason: "error" })
      const run = yield* getRun(receipt.runId)
      assert.strictEqual(run.status, "failed")
      assert.strictEqual(run.terminalReason, null)
      assert.strictEqual(run.error?.code, "upstream_unavailable")
      assert.strictEqual(run.error?.type, "api_error")
    }))

  it.effect("config resolves band run -> thread -> agent, time zone run -> thread -> UTC; strict cannot be relaxed", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const { thread } = yield* agentWithThread({ band: "lite" }, { timeZone: "Europe/Paris", dataHandling: "strict" })
      const a = yield* startRun(thread.id, { input: "x" })
      assert.deepStrictEqual((yield* getRun(a.runId)).config, {
        band: "lite",
        mediaFidelity: "standard",
        dataHandling: "strict",
        timeZone: "Europe/Paris"
      })
      yield* streamOf(a.runId)
      const b = yield* startRun(thread.id, { input: "x", band: "core", timeZone: "Asia/Tokyo" })
      assert.deepStrictEqual((yield* getRun(b.runId)).config.band, "core")
      assert.deepStrictEqual((yield* getRun(b.runId)).config.timeZone, "Asia/Tokyo")
      yield* streamOf(b.runId)
      const relax = yield* api.request("POST", `/v1/threads/${thread.id}/messages`, {
        body: { input: "x", dataHandling: "standard" },
        headers: json
      })
      yield* TestServer.expectError(relax, 400, "invalid_request_error", "invalid_request_error")
      const unavailable = yield* api.request("POST", `/v1/threads/${thread.id}/messages`, {
        body: { input: "x", band: "frontier" },
        headers: json
      })
      yield* TestServer.expectError(unavailable, 400, "invalid_request_error", "invalid_request_error")
    }))

  it.effect("GET /v1/runs filters by agent, thread, status and createdSince, newest first, with cursors", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const { agent, thread } = yield* agentWithThread()
      const ids: Array<string> = []
      for (let i = 0; i < 3; i++) {
        yield* TestClock.adjust("1 second")
        const r = yield* startRun(thread.id, { input: `n${i}` })
        yield* streamOf(r.runId)
        ids.push(r.runId)
      }
      const page1 = yield* TestServer.expectOk(
        yield* api.request("GET", `/v1/runs?threadId=${thread.id}&limit=2`),
        200,
        Page(Run)
      )
      assert.deepStrictEqual(page1.data.map((r) => r.id), [ids[2], ids[1]])
      assert.isTrue(page1.hasMore)
      const page2 = yield* TestServer.expectOk(
        yield* api.request("GET", `/v1/runs?threadId=${thread.id}&limit=2&cursor=${page1.nextCursor}`),
        200,
        Page(Run)
      )
      assert.deepStrictEqual(page2.data.map((r) => r.id), [ids[0]])
      assert.isFalse(page2.hasMore)
      const byAgent = yield* TestServer.expectOk(
        yield* api.request("GET", `/v1/runs?agentId=${agent.id}&status=completed`),
        200,
        Page(Run)
      )
      assert.deepStrictEqual(byAgent.data.map((r) => r.id), [ids[2], ids[1], ids[0]])
      const since = (yield* getRun(ids[1])).createdAt
      const recent = yield* TestServer.expectOk(
        yield* api.request("GET", `/v1/runs?threadId=${thread.id}&createdSince=${encodeURIComponent(since)}`),
        200,
        Page(Run)
      )
      assert.deepStrictEqual(recent.data.map((r) => r.id), [ids[2], ids[1]])
      const none = yield* TestServer.expectOk(
        yield* api.request("GET", `/v1/runs?threadId=${thread.id}&status=failed`),
        200,
        Page(Run)
      )
      assert.deepStrictEqual(none.data, [])
      yield* TestServer.expectError(
        yield* api.request("GET", "/v1/runs?status=nope"),
        400,
        "invalid_request_error",
        "invalid_request_error"
      )
      yield* TestServer.expectError(
        yield* api.request("GET", `/v1/runs/${ids[0]}`, { key: TestServer.Keys.c }),
        403,
        "permission_error",
        "permission_denied"
      )
    }))

  it.effect("Idempotency-Key on messages replays the receipt without starting a second run; warm answers 204", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const { thread } = yield* agentWithThread()
      const send = api.request("POST", `/v1/threads/${thread.id}/messages`, {
        body: { input: "once" },
        headers: { ...json, "idempotency-key": "msg-1" }
      })
      const first = yield* TestServer.expectOk(yield* send, 200, RunReceipt)
      assert.strictEqual(first.idempotencyKey, "msg-1")
      yield* streamOf(first.runId)
      const replay = yield* TestServer.expectOk(yield* send, 200, RunReceipt)
      assert.deepStrictEqual(replay, first)
      const list = yield* TestServer.expectOk(
        yield* api.request("GET", `/v1/runs?threadId=${thread.id}`),
        200,
        Page(Run)
      )
      assert.strictEqual(list.data.length, 1)
      const warm = yield* api.request("GET", `/v1/threads/${thread.id}/messages?warm=1`)
      assert.strictEqual(warm.status, 204)
      assert.strictEqual(warm.text, "")
    }))
})

TestServer.suite({ routePrices: "scripted=1000/1000" })("runs with priced routes", (it) => {
  it.effect("budgetCents stops the run with budget_exceeded once the metered cost reaches it", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread()
      const receipt = yield* startRun(thread.id, { input: "/steps 4", budgetCents: 1 })
      const { chunks } = yield* streamOf(receipt.runId)
      assert.deepStrictEqual(firstDataOf(chunks, "data-svc-terminal"), { terminalReason: "budget_exceeded" })
      const run = yield* getRun(receipt.runId)
      assert.strictEqual(run.status, "completed")
      assert.strictEqual(run.usage?.steps, 1)
      assert.isAtLeast(run.usage?.costCents ?? 0, 1)
      assert.deepStrictEqual(firstDataOf(chunks, "data-svc-usage"), run.usage)
    }))
})

TestServer.suite({
  bands: {
    lite: { route: "scripted", strict: true },
    core: { route: "scripted", strict: false },
    frontier: { route: null, strict: false }
  }
})("runs without a strict route", (it) => {
  it.effect("strict requested or inherited with no verified route is 400 strict_data_handling_unavailable before inference", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const { thread } = yield* agentWithThread()
      const requested = yield* api.request("POST", `/v1/threads/${thread.id}/messages`, {
        body: { input: "x", dataHandling: "strict" },
        headers: json
      })
      yield* TestServer.expectError(requested, 400, "invalid_request_error", "strict_data_handling_unavailable")
      const strictAgent = yield* agentWithThread({ policies: { dataHandling: "strict" } })
      const inherited = yield* api.request("POST", `/v1/threads/${strictAgent.thread.id}/messages`, {
        body: { input: "x" },
        headers: json
      })
      yield* TestServer.expectError(inherited, 400, "invalid_request_error", "strict_data_handling_unavailable")
      const onLite = yield* startRun(strictAgent.thread.id, { input: "x", band: "lite" })
      yield* streamOf(onLite.runId)
      const runs = yield* TestServer.expectOk(
        yield* api.request("GET", `/v1/runs?threadId=${thread.id}`),
        200,
        Page(Run)
      )
      assert.deepStrictEqual(runs.data, [])
    }))
})
