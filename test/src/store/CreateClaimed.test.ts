/**
 * Creating a run claims its thread in one statement. The same creation
 * delivered again (a thread entity's Begin whose reply was lost when a runner
 * died is sent again) finds its run: "existing", whether the run still holds
 * the thread or has ended meanwhile; it never claims the thread again.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { EventLog } from "../../../src/runs/EventLog.ts"
import { Finalize } from "../../../src/runs/Finalize.ts"
import { completed } from "../../../src/runs/Outcome.ts"
import { RunRepo } from "../../../src/store/RunRepo.ts"
import * as RunStage from "../../support/RunStage.ts"

layer(RunStage.layer, { timeout: RunStage.setupTimeout })("RunRepo.createClaimed", (it) => {
  it.effect("the same creation delivered again is 'existing', before and after the run ended; the thread is not claimed again", () =>
    Effect.gen(function*() {
      const repo = yield* RunRepo
      const row = yield* RunStage.stageRun()
      const again = { ...row, run: { ...row.run, status: "queued" as const } }
      assert.strictEqual(yield* repo.createClaimed(again), "existing")
      assert.strictEqual(yield* repo.activeRun(row.run.threadId), row.id)

      // The run ends and frees its thread; the late delivery still finds it.
      const writer = yield* (yield* EventLog).writer(row.id, { fresh: true })
      yield* writer.emit({ type: "start", messageId: row.id })
      yield* (yield* Finalize).outcome(
        row,
        writer,
        completed(null),
        row.run.usage ?? { inputTokens: 0, outputTokens: 0, totalTokens: 0, costCents: 0, steps: 0 }
      )
      assert.strictEqual(yield* repo.activeRun(row.run.threadId), null)
      assert.strictEqual(yield* repo.createClaimed(again), "existing")
      assert.strictEqual(yield* repo.activeRun(row.run.threadId), null)
      assert.strictEqual((yield* RunStage.reload(row.id)).run.status, "completed")
    }).pipe(Effect.scoped))
})
