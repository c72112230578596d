/** Threads: the resource routes of spec 4.2. */
import { Context, Effect, Layer, Option } from "effect"
import type { Band } from "../../domain/Band.ts"
import { normalizeContext } from "../../domain/Context.ts"
import { InvalidRequest, type NotFound, type PermissionDenied } from "../../domain/Errors.ts"
import type { AgentId, ThreadId } from "../../domain/Ids.ts"
import { applyMetadataPatch } from "../../domain/Metadata.ts"
import type { PageOf, PageRequest } from "../../domain/Page.ts"
import type { Principal } from "../../domain/Principal.ts"
import type { Thread, ThreadCreate, ThreadPatch } from "../../domain/Thread.ts"
import { Agents } from "../agents/Agents.ts"
import { IdGenerator } from "../IdGenerator.ts"
import { Bands } from "../model/Bands.ts"
import { requireOwned } from "../Ownership.ts"
import type { AgentRow } from "../store/AgentRepo.ts"
import { pageWindow, toPage } from "../store/Cursor.ts"
import { ThreadRepo, type ThreadRow } from "../store/ThreadRepo.ts"
import { isIanaZone, nowIso } from "../Time.ts"
import { Previews } from "../workspace/Previews.ts"
import { ThreadWorkspaces } from "../workspace/ThreadWorkspaces.ts"
import type { PreviousTurn } from "./ContextPrefix.ts"

type Owned<A> = Effect.Effect<A, NotFound | PermissionDenied>

export class Threads extends Context.Service<Threads, {
  readonly create: (
    principal: Principal,
    input: ThreadCreate
  ) => Effect.Effect<Thread, InvalidRequest | NotFound | PermissionDenied>
  readonly get: (principal: Principal, id: ThreadId) => Owned<Thread>
  readonly getRow: (principal: Principal, id: ThreadId) => Owned<ThreadRow>
  /** The thread with its agent, in one read (a run starts from both). */
  readonly getWithAgent: (
    principal: Principal,
    id: ThreadId
  ) => Owned<{ readonly thread: ThreadRow; readonly agent: AgentRow; readonly previous: PreviousTurn | null }>
  readonly list: (
    principal: Principal,
    agentId: AgentId,
    page: PageRequest
  ) => Effect.Effect<PageOf<Thread>, InvalidRequest | NotFound | PermissionDenied>
  readonly update: (
    principal: Principal,
    id: ThreadId,
    patch: ThreadPatch
  ) => Effect.Effect<Thread, InvalidRequest | NotFound | PermissionDenied>
  readonly remove: (
    principal: Principal,
    id: ThreadId
  ) => Owned<{ readonly id: ThreadId; readonly object: "thread"; readonly deleted: true }>
}>()("svc/Threads") {
  static readonly layer = Layer.effect(Threads)(
    Effect.gen(function*() {
      const repo = yield* ThreadRepo
      const workspaces = yield* ThreadWorkspaces
      const previews = yield* Previews
      const agents = yield* Agents
      const bands = yield* Bands
      const ids = yield* IdGenerator

      const checkBand = (band: Band | null | undefined) =>
        band === null || band === undefined || bands.isAvailable(band)
          ? Effect.void
          : Effect.fail(
            InvalidRequest.forField("band", `Band '${band}' is not available on this deployment (see GET /v1/bands).`)
          )

      const checkTimeZone = (tz: string | null | undefined) =>
        tz === null || tz === undefined || isIanaZone(tz)
          ? Effect.void
          : Effect.fail(InvalidRequest.forField("timeZone", `'${tz}' is not a valid IANA time zone.`))

      const context = (input: ThreadCreate["context"], fallback: Thread["context"]) => {
        if (input === undefined) return Effect.succeed(fallback)
        const blocks = normalizeContext(input)
        return blocks instanceof InvalidRequest ? Effect.fail(blocks) : Effect.succeed(blocks)
      }

      const getRow = (principal: Principal, id: ThreadId) =>
        repo.find(id).pipe(Effect.flatMap(requireOwned<ThreadRow>(principal, "thread", id)))

      return {
        create: Effect.fn("Threads.create")(function*(principal: Principal, input: ThreadCreate) {
          yield* checkBand(input.band)
          yield* checkTimeZone(input.timeZone)
          const blocks = yield* context(input.context, [])
          const now = yield* nowIso
          const thread: Thread = {
            id: yield* ids.make("thread"),
            object: "thread",
            agentId: input.agentId,
            context: blocks,
            band: input.band ?? null,
            dataHandling: input.dataHandling ?? null,
            timeZone: input.timeZone ?? null,
            status: "idle",
            workspace: null,
            metadata: input.metadata ?? {},
            createdAt: now,
            updatedAt: now
          }
          // The agent check and the insert in one statement; only a refusal looks the agent up to say why.
          const inserted = yield* repo.insertForAgent({
            id: thread.id,
            createdAt: now,
            thread,
            organizationId: principal.organizationId,
            workspaceId: principal.workspaceId,
            contextRefreshAt: null,
            workspaceSpec: null
          })
          if (Option.isSome(inserted)) return inserted.value.thread
          yield* agents.get(principal, input.agentId)
          return yield* Effect.die(new Error(`agent ${input.agentId} was found but the thread could not be inserted`))
        }),
        get: (principal, id) => Effect.flatMap(getRow(principal, id), previews.present),
        getRow,
        getWithAgent: Effect.fn("Threads.getWithAgent")(function*(principal: Principal, id: ThreadId) {
          const found = yield* repo.findWithAgent(id)
          const thread = yield* requireOwned<ThreadRow>(principal, "thread", id)(Option.map(found, (f) => f.thread))
          const agentId = thread.thread.agentId
          const agent = yield* requireOwned<AgentRow>(principal, "agent", agentId)(
            Option.fromNullishOr(Option.getOrUndefined(found)?.agent)
          )
          return { thread, agent, previous: Option.getOrUndefined(found)?.previous ?? null }
        }),
        list: Effect.fn("Threads.list")(function*(principal: Principal, agentId: AgentId, page: PageRequest) {
          yield* agents.get(principal, agentId)
          const { limit, after } = yield* pageWindow(page)
          const rows = yield* Effect.forEach(
            yield* repo.listByAgent(agentId, limit, after),
            (row) => Effect.map(previews.present(row), (thread) => ({ ...row, thread }))
          )
          return toPage(rows, limit, (row) => row.thread)
        }),
        update: Effect.fn("Threads.update")(function*(principal: Principal, id: ThreadId, patch: ThreadPatch) {
          const row = yield* getRow(principal, id)
          const t = row.thread
          yield* checkBand(patch.band)
          yield* checkTimeZone(patch.timeZone)
          // dataHandling only escalates: a strict thread cannot be relaxed.
          if (patch.dataHandling === null && t.dataHandling === "strict") {
            return yield* InvalidRequest.forField(
              "dataHandling",
              "A strict thread cannot be relaxed; dataHandling only escalates."
            )
          }
          const blocks = yield* context(patch.context, t.context)
          const metadata = applyMetadataPatch(t.metadata, patch.metadata)
          if (typeof metadata === "string") return yield* InvalidRequest.forField("metadata", metadata)
          const now = yield* nowIso
          const next: ThreadRow = {
            ...row,
            contextRefreshAt: patch.forceRefresh === true ? now : row.contextRefreshAt,
            thread: {
              ...t,
              context: blocks,
              band: patch.band === undefined ? t.band : patch.band,
              dataHandling: patch.dataHandling === undefined ? t.dataHandling : patch.dataHandling,
              timeZone: patch.timeZone === undefined ? t.timeZone : patch.timeZone,
              metadata,
              updatedAt: now
            }
          }
          yield* repo.update(next)
          return yield* previews.present(next)
        }),
        remove: Effect.fn("Threads.remove")(function*(principal: Principal, id: ThreadId) {
          yield* getRow(principal, id)
          yield* repo.remove(id)
          yield* workspaces.remove([id])
          return { id, object: "thread" as const, deleted: true as const }
        })
      }
    })
  ).pipe(Layer.provide([ThreadRepo.layer, Agents.layer, Bands.layer, Previews.layer]))
}
