/**
 * Behaviour of the thread entity. Turns of one thread are handled one at a
 * time here; the conditional claim in the database remains the guarantee
 * across nodes (a thread entity can move between runners).
 */
import { Clock, Effect, Layer } from "effect"
import { ServiceConfig } from "../src/config/ServiceConfig.ts"
import { FollowupRepo } from "../src/store/FollowupRepo.ts"
import { RunRepo } from "../src/store/RunRepo.ts"
import { IdGenerator } from "../src/IdGenerator.ts"
import { nowIso } from "../src/Time.ts"
import { Interactions } from "./Interactions.ts"
import { RunEntity } from "./RunEntity.ts"
import { ThreadEntity } from "./ThreadEntity.ts"

export const ThreadEntityLive = Layer.unwrap(Effect.map(Clock.Clock, (clock) => ThreadEntity.toLayer(
  Effect.gen(function*() {
    const repo = yield* RunRepo
    const followups = yield* FollowupRepo
    const interactions = yield* Interactions
    const ids = yield* IdGenerator
    const { maxActiveRunsPerWorkspace } = (yield* ServiceConfig).limits
    const runClient = yield* RunEntity.client
    const onOwnClock = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, Clock.Clock, clock)
    return ThreadEntity.of({
      Begin: ({ payload: { prepared } }) =>
        onOwnClock(Effect.gen(function*() {
          const claimed = yield* repo.createClaimed({
            id: prepared.run.id,
            createdAt: prepared.run.createdAt,
            organizationId: prepared.organizationId,
            workspaceId: prepared.workspaceId,
            plan: prepared.plan,
            idempotencyKey: prepared.idempotencyKey,
            run: prepared.run
          }, maxActiveRunsPerWorkspace)
          if (claimed === "created") {
            // A dispatch that cannot be sent is the recovery pass's to repeat: the run is stored.
            yield* runClient(prepared.run.id).Start({ runId: prepared.run.id, generation: 0 }, { discard: true }).pipe(
              Effect.catchCause((cause) => Effect.logWarning("run dispatch failed; left to the recovery pass", cause))
            )
            return { _tag: "Started" as const }
          }
          const active = yield* repo.activeRun(prepared.run.threadId)
          // A busy thread answers as busy (its message may be held) even when the workspace is also at its cap.
          if (active === null && claimed === "capped") return { _tag: "Capped" as const }
          if (active !== null && prepared.holdableText !== null) {
            // Text that answers the run's lone pending approval or free-text question is consumed as the answer.
            const answered = yield* interactions.answerWithText(active, prepared.holdableText)
            if (answered !== undefined) {
              return { _tag: "Busy" as const, activeRunId: active, followupId: null, resolvedInteractionId: answered }
            }
            const followupId = yield* ids.make("followup")
            if (yield* followups.hold(active, followupId, prepared.holdableText, yield* nowIso)) {
              return { _tag: "Busy" as const, activeRunId: active, followupId, resolvedInteractionId: null }
            }
          }
          return { _tag: "Busy" as const, activeRunId: active, followupId: null, resolvedInteractionId: null }
        })),
      CancelActive: ({ payload }) =>
        onOwnClock(Effect.gen(function*() {
          const active = yield* repo.activeRun(payload.threadId)
          if (active !== null) yield* runClient(active).Cancel({ runId: active }).pipe(Effect.orDie)
          return active
        }))
    })
  }),
  { maxIdleTime: "1 minute" }
)))
