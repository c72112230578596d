/**
 * Write replay (spec 4.8) on real PostgreSQL: a journaled write that completed
 * replays its result and a definite failure its error, without being sent
 * again; a write whose dispatch was never settled (the process died between
 * dispatch and settlement: here its fiber is interrupted while GitHub has it)
 * answers codehost_action_outcome_unknown and is not sent again either.
 */
import { assert, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer } from "effect"
import * as WriteJournal from "../../../src/codehost/WriteJournal.ts"
import { CodehostRepo } from "../../../src/store/CodehostRepo.ts"
import type { ToolOutcome } from "../../../src/tools/ToolOutcome.ts"
import * as RunStage from "../../support/RunStage.ts"

layer(Layer.provideMerge(CodehostRepo.layer, RunStage.layer), { timeout: RunStage.setupTimeout })(
  "the write journal",
  (it) => {
    it.effect("a completed write replays its result and a failed one its error, neither sent twice", () =>
      Effect.gen(function*() {
        const repo = yield* CodehostRepo
        const row = yield* RunStage.stageRun()
        const journal = WriteJournal.make(repo, row.id)
        let sent = 0
        const created: ToolOutcome = { output: { number: 7 }, text: "{\"number\":7}", isError: false }
        const refused: ToolOutcome = {
          output: { error: { code: "codehost_github_error", message: "GitHub answered 422" } },
          text: "codehost_github_error: GitHub answered 422",
          isError: true
        }
        const attempt = (outcome: ToolOutcome) => Effect.sync(() => (sent++, outcome))
        assert.deepStrictEqual(yield* journal.guard("codehost_create_issue", "tc_a", attempt(created)), created)
        assert.deepStrictEqual(yield* journal.guard("codehost_create_issue", "tc_a", attempt(created)), created)
        assert.deepStrictEqual(yield* journal.guard("codehost_create_issue", "tc_b", attempt(refused)), refused)
        assert.deepStrictEqual(yield* journal.guard("codehost_create_issue", "tc_b", attempt(created)), refused)
        assert.strictEqual(sent, 2)
      }))

    it.effect("a write dispatched but never settled answers codehost_action_outcome_unknown and is not sent again", () =>
      Effect.gen(function*() {
        const repo = yield* CodehostRepo
        const row = yield* RunStage.stageRun()
        const dispatched = yield* Deferred.make<void>()
        const inFlight = Effect.andThen(Deferred.succeed(dispatched, undefined), Effect.never)
        const fiber = yield* Effect.forkChild(
          WriteJournal.make(repo, row.id).guard("codehost_merge_pull_request", "tc_c", inFlight)
        )
        yield* Deferred.await(dispatched)
        yield* Fiber.interrupt(fiber)
        let sent = 0
        const again = yield* WriteJournal.make(repo, row.id).guard(
          "codehost_merge_pull_request",
          "tc_c",
          Effect.sync(() => (sent++, { output: {}, text: "{}", isError: false }))
        )
        assert.deepStrictEqual(again, WriteJournal.unknownOutcome)
        assert.strictEqual((again.output as { error: { code: string } }).error.code, "codehost_action_outcome_unknown")
        assert.strictEqual(sent, 0)
      }))
  }
)
