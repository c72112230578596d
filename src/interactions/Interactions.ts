/**
 * Interactions (spec 4.4): reads, single and batch resolution, and plain-text
 * answers. Settling the last pending interaction of a parked step resumes the
 * run (RunTrees: a worker's on its own entity) once it waits on nothing else.
 */
import { Context, Data, Effect, Layer, Option } from "effect"
import { RunTrees } from "../../actors/RunTrees.ts"
import { Conflict, InvalidRequest, type NotFound, type PermissionDenied } from "../../domain/Errors.ts"
import type { InteractionId, RunId } from "../../domain/Ids.ts"
import type { BatchItemStatus, Interaction, ResolveInteractionBody } from "../../domain/Interaction.ts"
import type { PageOf, PageRequest } from "../../domain/Page.ts"
import type { Principal } from "../../domain/Principal.ts"
import { requireOwned } from "../Ownership.ts"
import { pageWindow, toPage } from "../store/Cursor.ts"
import { type InteractionFilter, InteractionRepo, type InteractionRow } from "../store/InteractionRepo.ts"
import { RunRepo, type RunRow } from "../store/RunRepo.ts"
import { nowIso } from "../Time.ts"
import { approvalFromText, judge, sameOutcome } from "./Resolution.ts"

/** How settling one interaction went: recorded now, or a repeat of the outcome already recorded. */
type Settled = Data.TaggedEnum<{
  Resolved: { readonly row: InteractionRow }
  Same: { readonly row: InteractionRow }
}>
const Settled = Data.taggedEnum<Settled>()

type Owned<A> = Effect.Effect<A, NotFound | PermissionDenied>

export class Interactions extends Context.Service<Interactions, {
  readonly get: (principal: Principal, id: InteractionId) => Owned<Interaction>
  readonly list: (
    principal: Principal,
    filter: InteractionFilter,
    page: PageRequest
  ) => Effect.Effect<PageOf<Interaction>, InvalidRequest>
  readonly resolve: (
    principal: Principal,
    id: InteractionId,
    body: ResolveInteractionBody
  ) => Effect.Effect<Interaction, NotFound | PermissionDenied | InvalidRequest | Conflict>
  readonly resolveBatch: (
    principal: Principal,
    rootRunId: RunId,
    items: ReadonlyArray<{ readonly id: InteractionId } & ResolveInteractionBody>
  ) => Effect.Effect<
    { readonly items: ReadonlyArray<{ readonly id: InteractionId | null; readonly status: BatchItemStatus }> },
    NotFound | PermissionDenied
  >
  /**
   * A plain-text message to a thread whose run (or a worker of it) waits on exactly one pending
   * approval or free-text question answers it; the settled interaction's id.
   */
  readonly answerWithText: (runId: RunId, text: string) => Effect.Effect<InteractionId | undefined>
}>()("svc/Interactions") {
  static readonly layer = Layer.effect(Interactions)(
    Effect.gen(function*() {
      const repo = yield* InteractionRepo
      const runs = yield* RunRepo
      const trees = yield* RunTrees

      const getRow = (principal: Principal, id: InteractionId) =>
        repo.find(id).pipe(Effect.flatMap(requireOwned<InteractionRow>(principal, "interaction", id)))

      /** Resumes the run when the parked step waits on nothing any more. */
      const maybeResume = trees.resumeIfReady

      /** Settles one interaction by the rules of 4.4, without resuming. */
      const settleOne = (row: InteractionRow, body: ResolveInteractionBody) =>
        Effect.gen(function*() {
          const judged = judge(row.interaction, body)
          if (judged._tag === "Invalid") return yield* Effect.fail(InvalidRequest.of(judged.message))
          // One the run's end cancelled still takes the answer (spec 3.2 "pending or any"): it is recorded below.
          if (row.interaction.status !== "pending" && !row.closedByRun) {
            if (sameOutcome(row.interaction, judged.settlement)) return Settled.Same({ row })
            return yield* new Conflict({
              code: "idempotency_key_conflict",
              message: `Interaction '${row.id}' was already ${row.interaction.status} with a different outcome.`
            })
          }
          // Resolving after the run ended finalizes the record; nothing resumes (the run is terminal).
          if (!(yield* repo.settle(row.id, judged.settlement, yield* nowIso))) {
            const again = yield* repo.find(row.id)
            if (Option.isSome(again) && sameOutcome(again.value.interaction, judged.settlement)) {
              return Settled.Same({ row: again.value })
            }
            return yield* new Conflict({
              code: "idempotency_key_conflict",
              message: `Interaction '${row.id}' was settled concurrently with a different outcome.`
            })
          }
          const fresh = yield* repo.find(row.id)
          return Settled.Resolved({ row: Option.getOrElse(fresh, () => row) })
        })

      return {
        get: (principal, id) => Effect.map(getRow(principal, id), (row) => row.interaction),
        list: Effect.fn("Interactions.list")(
          function*(principal: Principal, filter: InteractionFilter, page: PageRequest) {
            const { limit, after } = yield* pageWindow(page)
            return toPage(yield* repo.list(principal, filter, limit, after), limit, (row) => row.interaction)
          }
        ),
        resolve: Effect.fn("Interactions.resolve")(
          function*(principal: Principal, id: InteractionId, body: ResolveInteractionBody) {
            const settled = yield* settleOne(yield* getRow(principal, id), body)
            if (settled._tag === "Resolved") yield* maybeResume(settled.row.interaction.runId)
            return settled.row.interaction
          }
        ),
        resolveBatch: Effect.fn("Interactions.resolveBatch")(function*(principal, rootRunId, items) {
          const run = yield* runs.findRoot(rootRunId).pipe(
            Effect.flatMap(requireOwned<RunRow>(principal, "run", rootRunId))
          )
          const results: Array<{ readonly id: InteractionId | null; readonly status: BatchItemStatus }> = []
          const touched = new Set<RunId>()
          for (const { id, ...body } of items) {
            const found = yield* repo.find(id)
            const row = Option.getOrUndefined(found)
            if (
              row === undefined || row.interaction.rootRunId !== run.id ||
              row.organizationId !== principal.organizationId ||
              row.workspaceId !== principal.workspaceId
            ) {
              results.push({ id, status: "not_found" })
              continue
            }
            const outcome = yield* settleOne(row, body).pipe(
              Effect.map((s): BatchItemStatus => (s._tag === "Same" ? "already_resolved" : "resolved")),
              Effect.catchTags({
                InvalidRequest: () => Effect.succeed<BatchItemStatus>("invalid_body"),
                Conflict: () => Effect.succeed<BatchItemStatus>("conflict")
              })
            )
            if (outcome === "resolved") touched.add(row.interaction.runId)
            results.push({ id, status: outcome })
          }
          for (const runId of touched) yield* maybeResume(runId)
          return { items: results }
        }),
        answerWithText: Effect.fn("Interactions.answerWithText")(function*(runId: RunId, text: string) {
          const pending = (yield* repo.ofTree(runId)).filter((i) => i.interaction.status === "pending")
          if (pending.length !== 1) return undefined
          const row = pending[0]
          const i = row.interaction
          let body: ResolveInteractionBody | undefined
          if (i.kind === "approval_request") {
            const choice = approvalFromText(text)
            if (choice !== undefined) body = { inputResponses: [{ requestId: i.id, optionId: choice }] }
          } else {
            const questions = i.request?.questions ?? []
            const only = questions.length === 1 ? questions[0] : undefined
            if (only !== undefined && (only.multiline || only.allowOther || (only.options ?? []).length === 0)) {
              body = { inputResponses: [{ requestId: only.id, text }] }
            }
          }
          if (body === undefined) return undefined
          const settled = yield* settleOne(row, body).pipe(Effect.option)
          if (Option.isNone(settled)) return undefined
          yield* maybeResume(i.runId)
          return row.id
        })
      }
    })
  )
}
