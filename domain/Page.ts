/** The list envelope every list route returns. */
import { Schema } from "effect"

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

/** `limit` and `cursor` query parameters shared by every list route. */
export const PageQuery = {
  limit: Schema.optionalKey(
    Schema.FiniteFromString.check(
      Schema.isInt({ message: "limit must be an integer" }),
      Schema.isBetween({ minimum: 1, maximum: PageLimits.max }, { message: `limit must be between 1 and ${PageLimits.max}` })
    )
  ),
  cursor: Schema.optionalKey(Schema.String)
}

export interface PageRequest {
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

/** Deletes answer with this shape. */
export const Deleted = <O extends string>(object: O) =>
  Schema.Struct({ id: Schema.String, object: Schema.Literal(object), deleted: Schema.Literal(true) })
