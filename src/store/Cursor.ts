/**
 * Opaque page cursors: the (createdAt, id) of the last item of a page,
 * base64url-encoded. Lists order by createdAt then id, newest first.
 */
import { Effect, Option } from "effect"
import { InvalidRequest } from "../../domain/Errors.ts"
import { cursorPosition, PageLimits, type PageOf, type PageRequest } from "../../domain/Page.ts"

export interface Position {
  readonly createdAt: string
  readonly id: string
}

export const encodeCursor = (p: Position): string =>
  Buffer.from(JSON.stringify([p.createdAt, p.id]), "utf8").toString("base64url")

/** The query schema (domain/Page.ts) already refused foreign cursors; this is for callers that did not decode one. */
export const decodeCursor = (cursor: string): Effect.Effect<Position, InvalidRequest> =>
  Option.match(cursorPosition(cursor), {
    onNone: () => Effect.fail(InvalidRequest.forQuery("cursor", "cursor is not a cursor this API returned.")),
    onSome: ([createdAt, id]) => Effect.succeed({ createdAt, id })
  })

/** The resolved limit and the position to start after (if any). */
export const pageWindow = (request: PageRequest) =>
  Effect.map(
    request.cursor === undefined ? Effect.succeed(undefined) : decodeCursor(request.cursor),
    (after) => ({ limit: request.limit ?? PageLimits.default, after })
  )

/** Builds the page from `limit + 1` fetched rows. */
export const toPage = <R extends Position, A>(
  rows: ReadonlyArray<R>,
  limit: number,
  toItem: (row: R) => A
): PageOf<A> => {
  const hasMore = rows.length > limit
  const shown = hasMore ? rows.slice(0, limit) : rows
  const last = shown[shown.length - 1]
  return {
    object: "list",
    data: shown.map(toItem),
    hasMore,
    nextCursor: hasMore && last !== undefined ? encodeCursor(last) : null,
    limit
  }
}
