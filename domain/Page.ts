/** The list envelope every list route returns. */
import { Option, Result, Schema, SchemaTransformation } from "effect"
import { Base64Url } from "effect/encoding"
import { isAnyId } from "./Ids.ts"

export const PageLimits = { default: 20, max: 100 } as const

export const Page = <S extends Schema.Top>(item: S) =>
  Schema.Struct({
    object: Schema.Literal("list"),
    data: Schema.Array(item),
    hasMore: Schema.Boolean,
    nextCursor: Schema.NullOr(Schema.String),
    limit: Schema.Number
  })

export interface PageOf<A> {
  readonly object: "list"
  readonly data: ReadonlyArray<A>
  readonly hasMore: boolean
  readonly nextCursor: string | null
  readonly limit: number
}

/**
 * What an opaque page cursor holds: the (createdAt, id) of the last item of a
 * page, as stored, JSON in base64url (src/store/Cursor.ts writes it). Nothing
 * else decodes: no client text (a NUL) reaches SQL through a cursor.
 */
export const CursorPosition = Schema.Tuple([
  Schema.String.check(Schema.isPattern(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)),
  Schema.String.check(isAnyId)
])

const decodePosition = Schema.decodeUnknownOption(Schema.fromJsonString(CursorPosition))

/** The position a cursor holds, if it is one this API wrote. */
export const cursorPosition = (cursor: string): Option.Option<typeof CursorPosition.Type> =>
  Option.flatMap(Result.getSuccess(Base64Url.decodeString(cursor)), decodePosition)

const limitMessage = `limit must be an integer between 1 and ${PageLimits.max}`

/** `limit` and `cursor` query parameters shared by every list route. */
export const PageQuery = {
  // Digits only: `1e1`, `0x10`, ` 5` or `5.0` are not what a client means by a page size.
  limit: Schema.optionalKey(
    Schema.String.check(Schema.isPattern(/^[0-9]{1,3}$/, { message: limitMessage })).pipe(
      Schema.decodeTo(
        Schema.Finite.check(Schema.isBetween({ minimum: 1, maximum: PageLimits.max }, { message: limitMessage })),
        SchemaTransformation.numberFromString
      )
    )
  ),
  /** Opaque: a cursor this API returned, else 400 before anything is read. */
  cursor: Schema.optionalKey(
    Schema.String.check(
      Schema.makeFilter((cursor: string) => Option.isSome(cursorPosition(cursor)), {
        message: "cursor is not a cursor this API returned"
      })
    )
  )
}

export interface PageRequest {
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

/** Deletes answer with this shape. */
export const Deleted = <O extends string>(object: O) =>
  Schema.Struct({ id: Schema.String, object: Schema.Literal(object), deleted: Schema.Literal(true) })
