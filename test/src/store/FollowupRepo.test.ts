/**
 * Follow-up claims on real PostgreSQL: a follow-up claimed by an execution
 * that ended before storing its replay (a crash in between) is claimed again
 * by the next execution's first claim, so no held message is lost.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { FollowupId } from "../../../domain/Ids.ts"
import { FollowupRepo } from "../../../src/store/FollowupRepo.ts"
import * as RunStage from "../../support/RunStage.ts"

layer(Layer.provideMerge(FollowupRepo.layer, RunStage.layer), { timeout: RunStage.setupTimeout })(
  "follow-up claims",
  (it) => {
    it.effect("a claim left undelivered is claimed again only by an execution's first claim (reclaim)", () =>
      Effect.gen(function*() {
        const repo = yield* FollowupRepo
        const row = yield* RunStage.stageRun()
        const id = FollowupId.make("fu_00000000000000000000aa")
        assert.isTrue(yield* repo.hold(row.id, id, "are you there?", "2026-11-23T10:00:00.000Z"))
        const first = yield* repo.claim(row.id, "2026-11-23T10:00:01.000Z")
        assert.deepStrictEqual(first.map((f) => f.id), [id])
        // The execution died before storing the replay: a plain claim finds nothing, a reclaim finds it.
        assert.deepStrictEqual(yield* repo.claim(row.id, "2026-11-23T10:00:02.000Z"), [])
        const again = yield* repo.claim(row.id, "2026-11-23T10:00:03.000Z", true)
        assert.deepStrictEqual(again.map((f) => [f.id, f.text]), [[id, "are you there?"]])
      }))
  }
)
