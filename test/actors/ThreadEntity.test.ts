/**
 * The thread entity's protocol (Begin, CancelActive) through
 * `Entity.makeTestClient`, with its live behaviour over real repositories on
 * PostgreSQL: a turn on an idle thread claims it and dispatches its run; a
 * turn while another run holds the thread answers Busy (its text held as a
 * follow-up); a redelivered Begin, or the same request again, starts its run
 * again; a workspace at its cap answers Capped; CancelActive cancels the run
 * holding the thread on its entity. Run entities here only record what they
 * receive (EntityStage), so a claimed thread stays claimed.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Option, Queue } from "effect"
import { Entity } from "effect/cluster"
import { TestClock } from "effect/testing"
import { type PreparedRun, ThreadEntity } from "../../actors/ThreadEntity.ts"
import { ThreadEntityLive } from "../../actors/ThreadEntityLive.ts"
import type { ToolCall } from "../../domain/Conversation.ts"
import { type AgentId, type FollowupId, type RunId, type ThreadId, ToolCallId } from "../../domain/Ids.ts"
import { ZeroUsage } from "../../domain/Run.ts"
import { ServiceConfig } from "../../src/config/ServiceConfig.ts"
import { IdGenerator } from "../../src/IdGenerator.ts"
import { EventLog, runChange } from "../../src/runs/EventLog.ts"
import { Parking } from "../../src/runs/Parking.ts"
import { FollowupRepo } from "../../src/store/FollowupRepo.ts"
import { InteractionRepo } from "../../src/store/InteractionRepo.ts"
import { RunRepo } from "../../src/store/RunRepo.ts"
import { nowIso } from "../../src/Time.ts"
import * as EntityStage from "../support/EntityStage.ts"
import { RunInbox } from "../support/EntityStage.ts"
import * as RunStage from "../support/RunStage.ts"

interface Target {
  readonly threadId: ThreadId
  readonly agentId: AgentId
}

interface Turn {
  readonly input?: string
  /** Default: the input (plain text may be held as a follow-up); null: not holdable. */
  readonly holdableText?: string | null
  readonly idempotencyKey?: string
  readonly workspaceId?: string
}

/** A new agent's idle thread. */
const idleThread = Effect.map(RunStage.agentWithThread, ({ agent, thread }): Target => ({
  threadId: thread.id,
  agentId: agent.id
}))

/** A run prepared for the thread the way the API node prepares a turn. */
const prepare = (target: Target, turn: Turn = {}) =>
  Effect.gen(function*() {
    const id = yield* (yield* IdGenerator).make("run")
    const input = turn.input ?? "hello"
    return {
      run: RunStage.queuedRun(id, target, yield* nowIso),
      plan: RunStage.planWith({ input }),
      organizationId: RunStage.principal.organizationId,
      workspaceId: turn.workspaceId ?? RunStage.principal.workspaceId,
      idempotencyKey: turn.idempotencyKey ?? null,
      holdableText: turn.holdableText === undefined ? input : turn.holdableText
    } satisfies PreparedRun
  })

/** The thread entity of `threadId` (its live behaviour with `limits` over the stage's). */
const threadClient = (threadId: ThreadId, maxActiveRunsPerWorkspace?: number) =>
  Effect.gen(function*() {
    const config = yield* ServiceConfig
    const live = maxActiveRunsPerWorkspace === undefined ? ThreadEntityLive : ThreadEntityLive.pipe(
      Layer.provide(
        Layer.succeed(ServiceConfig)({
          ...config,
          limits: { ...config.limits, maxActiveRunsPerWorkspace }
        })
      )
    )
    const clients = yield* Entity.makeTestClient(ThreadEntity, live)
    return yield* clients(threadId)
  })

/** The next Start a run entity received. */
const nextStart = Effect.flatMap(RunInbox, (inbox) => Queue.take(inbox.starts))

const activeRun = (threadId: ThreadId) => Effect.flatMap(RunRepo, (repo) => repo.activeRun(threadId))
const stored = (prepared: PreparedRun) =>
  Effect.flatMap(RunRepo, (repo) => Effect.map(repo.find(prepared.run.id), Option.isSome))

/** A thread claimed by a run the entity started (its Start taken from the inbox). */
const busyThread = (turn: Turn = {}, maxActiveRunsPerWorkspace?: number) =>
  Effect.gen(function*() {
    const target = yield* idleThread
    const first = yield* prepare(target, turn)
    const thread = yield* threadClient(target.threadId, maxActiveRunsPerWorkspace)
    assert.deepStrictEqual(yield* thread.Begin({ prepared: first }), { _tag: "Started" })
    yield* nextStart
    return { target, first, thread }
  })

/** Busy, held by `activeRunId`. */
const busy = (activeRunId: RunId, followupId: FollowupId | null = null) => ({
  _tag: "Busy" as const,
  activeRunId,
  followupId,
  resolvedInteractionId: null
})

/** A thread whose run is parked on the approval of one call, as its loop parks it; its pending interaction. */
const parkedOnApproval = Effect.gen(function*() {
  const staged = yield* RunStage.stageRun()
  const call: ToolCall = { id: ToolCallId.make("call_1"), name: "mcp__files__write", input: { path: "a.txt" } }
  yield* Effect.scoped(Effect.gen(function*() {
    const writer = yield* (yield* EventLog).writer(staged.id, { fresh: true })
    yield* writer.emit({ type: "start", messageId: staged.id })
    yield* writer.commit([runChange({ status: "running", startedAt: yield* nowIso })])
    yield* (yield* Parking).park(RunStage.approvalStep(yield* RunStage.reload(staged.id), writer, call, ZeroUsage))
    yield* writer.flush
  }))
  const [pending] = yield* (yield* InteractionRepo).ofRun(staged.id)
  return { row: yield* RunStage.reload(staged.id), interactionId: pending.id }
})

layer(EntityStage.threadStage, { timeout: EntityStage.setupTimeout })("ThreadEntity", (it) => {
  it.effect("Begin on an idle thread claims it for the run, stores the run queued and sends its first Start", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust(1)
      const target = yield* idleThread
      const prepared = yield* prepare(target)
      const thread = yield* threadClient(target.threadId)

      assert.deepStrictEqual(yield* thread.Begin({ prepared }), { _tag: "Started" })
      assert.strictEqual(yield* activeRun(target.threadId), prepared.run.id)
      assert.strictEqual((yield* RunStage.reload(prepared.run.id)).run.status, "queued")
      assert.deepStrictEqual(yield* nextStart, { runId: prepared.run.id, generation: 0, created: true })
    }))

  it.effect("a second turn while a run holds the thread answers Busy and holds its text as a follow-up", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust(1)
      const { target, first, thread } = yield* busyThread()

      const second = yield* prepare(target, { input: "And another thing." })
      const answer = yield* thread.Begin({ prepared: second })
      const followupId = answer._tag === "Busy" ? answer.followupId : null
      assert.match(followupId ?? "", /^fu_[0-9A-Za-z]{22}$/)
      assert.deepStrictEqual(answer, busy(first.run.id, followupId))
      const held = yield* (yield* FollowupRepo).queued(first.run.id)
      assert.deepStrictEqual(held.map((f) => [f.id, f.text]), [[followupId, "And another thing."]])
      assert.isFalse(yield* stored(second))
      assert.strictEqual(yield* activeRun(target.threadId), first.run.id)
    }))

  it.effect("a busy turn whose message cannot be held (not plain text) answers Busy without a follow-up", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust(1)
      const { target, first, thread } = yield* busyThread()

      const second = yield* prepare(target, { holdableText: null })
      assert.deepStrictEqual(yield* thread.Begin({ prepared: second }), busy(first.run.id))
      assert.deepStrictEqual(yield* (yield* FollowupRepo).queued(first.run.id), [])
      assert.isFalse(yield* stored(second))
    }))

  it.effect("a Begin delivered again (its reply was lost) answers Started and sends the run's Start again", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust(1)
      const { target, first, thread } = yield* busyThread()

      assert.deepStrictEqual(yield* thread.Begin({ prepared: first }), { _tag: "Started" })
      // Not the Start that follows the creation: the run is read afresh wherever it executes.
      assert.deepStrictEqual(yield* nextStart, { runId: first.run.id, generation: 0, created: false })
      assert.strictEqual(yield* activeRun(target.threadId), first.run.id)
    }))

  it.effect("a turn answering the active run's lone pending approval ('yes') is consumed as the answer, and the run resumes", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust(1)
      const { row, interactionId } = yield* parkedOnApproval
      const target = { threadId: row.run.threadId, agentId: row.run.agentId }
      const thread = yield* threadClient(target.threadId)

      const answer = yield* prepare(target, { input: "Yes." })
      assert.deepStrictEqual(yield* thread.Begin({ prepared: answer }), {
        _tag: "Busy",
        activeRunId: row.id,
        followupId: null,
        resolvedInteractionId: interactionId
      })
      const settled = yield* (yield* InteractionRepo).find(interactionId)
      const decided = Option.map(settled, ({ interaction }) => `${interaction.status}: ${interaction.decision}`)
      assert.deepStrictEqual(decided, Option.some("resolved: allow"))
      assert.deepStrictEqual(yield* (yield* FollowupRepo).queued(row.id), [])
      assert.deepStrictEqual(yield* nextStart, { runId: row.id, generation: row.generation, created: false })
      assert.strictEqual((yield* RunStage.reload(row.id)).run.status, "running")
    }))

  it.effect("the same request again (Idempotency-Key and input) answers Started with the run it started; another input is Busy", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust(1)
      const { target, first, thread } = yield* busyThread({ idempotencyKey: "turn-1" })

      const again = yield* prepare(target, { idempotencyKey: "turn-1" })
      assert.deepStrictEqual(yield* thread.Begin({ prepared: again }), {
        _tag: "Started",
        earlier: { runId: first.run.id, createdAt: first.run.createdAt }
      })
      assert.deepStrictEqual(yield* nextStart, { runId: first.run.id, generation: 0, created: false })
      assert.isFalse(yield* stored(again))

      const other = yield* prepare(target, { idempotencyKey: "turn-1", input: "something else", holdableText: null })
      assert.deepStrictEqual(yield* thread.Begin({ prepared: other }), busy(first.run.id))
    }))

  it.effect("a workspace at its maximum of active runs answers Capped and creates nothing; a busy thread still answers Busy", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust(1)
      const workspaceId = `capped_${yield* (yield* IdGenerator).make("run")}`
      const { target, first, thread } = yield* busyThread({ workspaceId }, 1)

      const idle = yield* idleThread
      const capped = yield* prepare(idle, { workspaceId })
      assert.deepStrictEqual(yield* (yield* threadClient(idle.threadId, 1)).Begin({ prepared: capped }), {
        _tag: "Capped"
      })
      assert.isFalse(yield* stored(capped))
      assert.isNull(yield* activeRun(idle.threadId))

      const again = yield* prepare(target, { workspaceId, holdableText: null })
      assert.deepStrictEqual(yield* thread.Begin({ prepared: again }), busy(first.run.id))
    }))

  it.effect("CancelActive cancels the run holding the thread on its entity and answers its id; on an idle thread, null", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust(1)
      const inbox = yield* RunInbox
      const idle = yield* idleThread
      assert.isNull(yield* (yield* threadClient(idle.threadId)).CancelActive({ threadId: idle.threadId }))
      assert.strictEqual(yield* Queue.size(inbox.cancels), 0)

      const { target, first, thread } = yield* busyThread()
      assert.strictEqual(yield* thread.CancelActive({ threadId: target.threadId }), first.run.id)
      // The Cancel is persisted and answered before CancelActive answers.
      assert.deepStrictEqual(yield* Queue.takeAll(inbox.cancels), [first.run.id])
    }))
})
