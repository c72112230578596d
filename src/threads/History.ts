/**
 * A thread's history (`GET /v1/threads/:id/messages`): its messages as the AI
 * SDK's `UIMessage`s, oldest first, a page at a time. Each root run is two
 * messages: the user's (`msg_...`) and the assistant's (the run's id, as its
 * stream names it); a run with nothing stored yet has only the user's. A run
 * still going shows what is stored so far. The cursor is the position of the
 * page's last message, the run's (createdAt, message id), so pages hold
 * still while later runs are added.
 */
import { Context, Effect, Layer } from "effect"
import { InvalidRequest, type NotFound, type PermissionDenied } from "../../domain/Errors.ts"
import type { ThreadId } from "../../domain/Ids.ts"
import type { PageOf, PageRequest } from "../../domain/Page.ts"
import type { Principal } from "../../domain/Principal.ts"
import { messageOfId, type ThreadMessage, userMessageId } from "../../domain/ThreadMessage.ts"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { requireOwned } from "../Ownership.ts"
import { encodeCursor, pageWindow, type Position } from "../store/Cursor.ts"
import { HistoryRepo, type Turn, type TurnPosition, type TurnRecords } from "../store/HistoryRepo.ts"
import { ThreadRepo, type ThreadRow } from "../store/ThreadRepo.ts"
import { partsOfSteps, partsOfStream, userParts } from "./MessageParts.ts"

/** The position a cursor names: after the run's assistant message, or after its user message (at the run). */
const positionOf = (after: Position): Effect.Effect<TurnPosition, InvalidRequest> => {
  const message = messageOfId(after.id)
  return message === undefined
    ? Effect.fail(InvalidRequest.forQuery("cursor", "cursor is not a cursor this API returned."))
    : Effect.succeed({ createdAt: after.createdAt, runId: message.runId, inclusive: message.role === "user" })
}

/** The turn's messages: the user's, then the assistant's when the run has stored anything of it. */
const messagesOf = (turn: Turn, records: TurnRecords, publicUrl: string): Array<ThreadMessage> => {
  const metadata = { runId: turn.runId, createdAt: turn.createdAt }
  const user: ThreadMessage = {
    id: userMessageId(turn.runId),
    role: "user",
    parts: userParts(turn.input, turn.attachments, publicUrl),
    metadata
  }
  const steps = records.steps.get(turn.runId) ?? []
  const chunks = records.chunks.get(turn.runId) ?? []
  const parts = chunks.length > 0
    ? partsOfStream(chunks, (id) => records.approvals.get(id))
    : partsOfSteps(steps, records.followups.get(turn.runId) ?? [])
  return parts.length === 0 ? [user] : [user, { id: turn.runId, role: "assistant", parts, metadata }]
}

export class History extends Context.Service<History, {
  readonly page: (
    principal: Principal,
    threadId: ThreadId,
    page: PageRequest
  ) => Effect.Effect<PageOf<ThreadMessage>, InvalidRequest | NotFound | PermissionDenied>
}>()("svc/History") {
  static readonly layer = Layer.effect(History)(
    Effect.gen(function*() {
      const threads = yield* ThreadRepo
      const repo = yield* HistoryRepo
      const { publicUrl } = yield* ServiceConfig

      return {
        page: Effect.fn("History.page")(function*(principal: Principal, threadId: ThreadId, request: PageRequest) {
          yield* Effect.flatMap(threads.find(threadId), requireOwned<ThreadRow>(principal, "thread", threadId))
          const { limit, after } = yield* pageWindow(request)
          const from = after === undefined ? undefined : yield* positionOf(after)
          // After a user's message the page starts at its run: that message is read again and dropped.
          const skip = from?.inclusive === true ? 1 : 0
          const wanted = limit + 1 + skip
          // Each run is at least one message: `wanted` runs are always enough.
          const turns = yield* repo.turns(threadId, from, wanted)
          const messages: Array<ThreadMessage> = []
          let next = 0
          // Most runs are two messages: read the records of about as many runs as the page needs.
          while (messages.length < wanted && next < turns.length) {
            const batch = turns.slice(next, next + Math.ceil((wanted - messages.length) / 2))
            const records = yield* repo.records(batch.map((t) => t.runId))
            for (const turn of batch) messages.push(...messagesOf(turn, records, publicUrl))
            next += batch.length
          }
          const shown = skip === 1 && messages[0]?.id === after?.id ? messages.slice(1) : messages
          const data = shown.slice(0, limit)
          const last = data.at(-1)
          const hasMore = shown.length > limit
          return {
            object: "list" as const,
            data,
            hasMore,
            nextCursor: hasMore && last !== undefined
              ? encodeCursor({ createdAt: last.metadata.createdAt, id: last.id })
              : null,
            limit
          }
        })
      }
    })
  ).pipe(Layer.provide([ThreadRepo.layer, HistoryRepo.layer]))
}
