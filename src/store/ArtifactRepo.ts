/**
 * Rows of `artifacts` (migration 0016_artifacts): what runs stored, each
 * with its owner, run, thread and expiry; the bytes are in the artifact store
 * under `artifacts/<id>`.
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { ArtifactKind, type ArtifactRecord } from "../../domain/Artifact.ts"
import { ArtifactId, RunId, ThreadId } from "../../domain/Ids.ts"

const decodeRows = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({
  id: ArtifactId,
  organization_id: Schema.String,
  workspace_id: Schema.String,
  run_id: Schema.NullOr(RunId),
  thread_id: Schema.NullOr(ThreadId),
  kind: ArtifactKind,
  filename: Schema.String,
  media_type: Schema.String,
  bytes: Schema.NumberFromString,
  sha256: Schema.String,
  created_at: Schema.String,
  expires_at: Schema.String
})))
const decodeIds = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ id: ArtifactId })))

export class ArtifactRepo extends Context.Service<ArtifactRepo, {
  readonly insert: (record: ArtifactRecord) => Effect.Effect<void>
  readonly find: (id: ArtifactId) => Effect.Effect<Option.Option<ArtifactRecord>>
  /**
   * Artifacts to purge, at most `limit`: those that expired at `now`, and
   * those whose thread was deleted (an artifact goes with its thread).
   */
  readonly purgeable: (now: string, limit: number) => Effect.Effect<ReadonlyArray<ArtifactId>>
  readonly remove: (ids: ReadonlyArray<ArtifactId>) => Effect.Effect<void>
}>()("svc/ArtifactRepo") {
  static readonly layer = Layer.effect(ArtifactRepo)(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      return {
        insert: Effect.fn("ArtifactRepo.insert")(function*(r: ArtifactRecord) {
          yield* sql`INSERT INTO artifacts (id, organization_id, workspace_id, run_id, thread_id, kind, filename, media_type,
              bytes, sha256, created_at, expires_at)
            VALUES (${r.id}, ${r.organizationId}, ${r.workspaceId}, ${r.runId}, ${r.threadId}, ${r.kind}, ${r.filename},
              ${r.mediaType}, ${r.bytes}, ${r.sha256}, ${r.createdAt}, ${r.expiresAt})`.pipe(Effect.orDie)
        }),
        find: Effect.fn("ArtifactRepo.find")(function*(id: ArtifactId) {
          const rows =
            yield* sql`SELECT id, organization_id, workspace_id, run_id, thread_id, kind, filename, media_type,
              bytes::text, sha256, created_at, expires_at
            FROM artifacts WHERE id = ${id}`.pipe(Effect.flatMap(decodeRows), Effect.orDie)
          return Option.map(Option.fromNullishOr(rows[0]), (r): ArtifactRecord => ({
            id: r.id,
            organizationId: r.organization_id,
            workspaceId: r.workspace_id,
            runId: r.run_id,
            threadId: r.thread_id,
            kind: r.kind,
            filename: r.filename,
            mediaType: r.media_type,
            bytes: r.bytes,
            sha256: r.sha256,
            createdAt: r.created_at,
            expiresAt: r.expires_at
          }))
        }),
        purgeable: Effect.fn("ArtifactRepo.purgeable")(function*(now: string, limit: number) {
          const rows = yield* sql`SELECT id FROM artifacts WHERE expires_at <= ${now}
            UNION
            SELECT a.id FROM artifacts a WHERE a.thread_id IS NOT NULL
              AND NOT EXISTS (SELECT 1 FROM threads t WHERE t.id = a.thread_id)
            LIMIT ${limit}`.pipe(Effect.flatMap(decodeIds), Effect.orDie)
          return rows.map((r) => r.id)
        }),
        remove: Effect.fn("ArtifactRepo.remove")(function*(ids: ReadonlyArray<ArtifactId>) {
          if (ids.length === 0) return
          yield* sql`DELETE FROM artifacts WHERE ${sql.in("id", ids)}`.pipe(Effect.orDie)
        })
      }
    })
  )
}
