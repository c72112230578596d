/**
 * What a workspace keeps stored (SVC_WORKSPACE_STORAGE_QUOTA_BYTES): the bytes
 * of its files and of its artifacts that have not expired, summed from their
 * rows. `admit` writes a new row only while the sum stays within a limit, in a
 * short transaction holding the workspace's advisory lock, so two uploads that
 * each fit alone cannot both be admitted past the limit (on every process).
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Schema } from "effect"

export interface StorageScope {
  readonly organizationId: string
  readonly workspaceId: string
}

/** Whether the row was written (the store effect's value), or the bytes the workspace already used. */
export type Admission<A> =
  | { readonly _tag: "Admitted"; readonly value: A }
  | { readonly _tag: "Refused"; readonly used: number }

const decodeUsed = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ used: Schema.NumberFromString })))

export class StorageRepo extends Context.Service<StorageRepo, {
  /** Bytes of the workspace's files and of its artifacts not expired at `now`. */
  readonly used: (scope: StorageScope, now: string) => Effect.Effect<number>
  /** Runs `store` (a row's insert) when `used + bytes <= limit`, under the workspace's lock. */
  readonly admit: <A>(
    scope: StorageScope,
    bytes: number,
    limit: number,
    now: string,
    store: Effect.Effect<A>
  ) => Effect.Effect<Admission<A>>
}>()("svc/StorageRepo") {
  static readonly layer = Layer.effect(StorageRepo)(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const used = Effect.fn("StorageRepo.used")(function*(scope: StorageScope, now: string) {
        const rows = yield* sql`SELECT (
            (SELECT coalesce(sum(bytes), 0) FROM files
              WHERE organization_id = ${scope.organizationId} AND workspace_id = ${scope.workspaceId})
            + (SELECT coalesce(sum(bytes), 0) FROM artifacts
              WHERE organization_id = ${scope.organizationId} AND workspace_id = ${scope.workspaceId}
                AND expires_at > ${now})
          )::text AS used`.pipe(Effect.flatMap(decodeUsed), Effect.orDie)
        return rows[0]?.used ?? 0
      })
      const admit = <A>(scope: StorageScope, bytes: number, limit: number, now: string, store: Effect.Effect<A>) =>
        sql.withTransaction(
          Effect.gen(function*() {
            const lock = `storage:${scope.organizationId}/${scope.workspaceId}`
            yield* sql`SELECT pg_advisory_xact_lock(hashtextextended(${lock}, 0))`.pipe(Effect.orDie)
            const before = yield* used(scope, now)
            if (before + bytes > limit) return { _tag: "Refused", used: before } satisfies Admission<A>
            return { _tag: "Admitted", value: yield* store } satisfies Admission<A>
          })
        ).pipe(Effect.orDie, Effect.withSpan("StorageRepo.admit"))
      return { used, admit }
    })
  )
}
