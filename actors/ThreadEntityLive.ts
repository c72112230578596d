/**
 * Behaviour of the thread entity. Turns of one thread are handled one at a
 * time here; the conditional claim in the database remains the guarantee
 * across nodes (a thread entity can move between runners).
 */
import { Clock, Effect, Layer, Option } from "effect"
import type { RunId } from "../domain/Ids.ts"
import { ServiceConfig } from "../src/config/ServiceConfig.ts"
import { IdGenerator } from "../src/IdGenerator.ts"
import { Interactions } from "../src/interactions/Interactions.ts"
import { FollowupRepo } from "../src/store/FollowupRepo.ts"
import { RunRepo } from "../src/store/RunRepo.ts"
import { nowIso } from "../src/Time.ts"
import { EntityMaxIdleTime } from "./EntityResidency.ts"
import { RunTrees } from "./RunTrees.ts"
import { type PreparedRun, ThreadEntity } from "./ThreadEntity.ts"

export const ThreadEntityLive = Layer.unwrap(Effect.map(Clock.Clock, (clock) =>
  ThreadEntity.toLayer(
    Effect.gen(function*() {
      const repo = yield* RunRepo
      const followups = yield* FollowupRepo
      const interactions = yield* Interactions
      const ids = yield* IdGenerator
      const { maxActiveRunsPerWorkspace } = (yield* ServiceConfig).limits
      const onOwnClock = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, Clock.Clock, clock)
      const trees = yield* RunTrees
      // A dispatch that cannot be sent is the recovery pass's to repeat: the run is stored.
      const dispatch = (runId: RunId, generation: number, created = false) =>
        trees.dispatch({ id: runId, generation, workerRef: null, created })
      /** The thread's active run when the prepared one is the same request again (its Idempotency-Key and input). */
      const sameRequest = (active: RunId, prepared: PreparedRun) =>
        Effect.map(repo.find(active), (found) =>
          Option.isSome(found) && found.value.idempotencyKey === prepared.idempotencyKey &&
            found.value.plan?.input === prepared.plan.input
            ? found.value
            : undefined)
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
            // Delivered again (its first reply was lost): the run exists, and is started again in case its Start was lost too.
            if (claimed === "created" || claimed === "existing") {
              yield* dispatch(prepared.run.id, 0, claimed === "created")
              return { _tag: "Started" as const }
            }
            const active = yield* repo.activeRun(prepared.run.threadId)
            const earlier = active === null || prepared.idempotencyKey === null
              ? undefined
              : yield* sameRequest(active, prepared)
            if (earlier !== undefined) {
              yield* dispatch(earlier.id, earlier.generation)
              return { _tag: "Started" as const, earlier: { runId: earlier.id, createdAt: earlier.createdAt } }
            }
            // A busy thread answers as busy (its message may be held) even when the workspace is also at its cap.
            if (active === null && claimed === "capped") {
              return { _tag: "Capped" as const }
            }
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
            if (active !== null) {
              yield* trees.cancel(active)
            }
            return active
          }))
      })
    }),
    { maxIdleTime: EntityMaxIdleTime }
  )))
