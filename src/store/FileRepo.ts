/**
 * Rows of `files` (migration 0016_artifacts): what the Files API knows of an
 * upload; its bytes are in the artifact store under `files/<id>`.
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { FileId } from "../../domain/Ids.ts"
import type { Position } from "./Cursor.ts"

export interface FileRow extends Position {
  readonly id: FileId
  readonly organizationId: string
  readonly workspaceId: string
  readonly filename: string
  readonly mediaType: string
  readonly bytes: number
  readonly sha256: string
}

const decodeRows = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({
  id: FileId,
  organization_id: Schema.String,
  workspace_id: Schema.String,
  filename: Schema.String,
  media_type: Schema.String,
  bytes: Schema.NumberFromString,
  sha256: Schema.String,
  created_at: Schema.String
})))

const columns = "id, organization_id, workspace_id, filename, media_type, bytes::text, sha256, created_at"

export class FileRepo extends Context.Service<FileRepo, {
  readonly insert: (row: FileRow) => Effect.Effect<void>
  readonly find: (id: FileId) => Effect.Effect<Option.Option<FileRow>>
  /** A page of the workspace's files, newest first, after `after`; `limit + 1` rows tell whether more follow. */
  readonly list: (
    scope: { readonly organizationId: string; readonly workspaceId: string },
    limit: number,
    after: Position | undefined
  ) => Effect.Effect<ReadonlyArray<FileRow>>
  /** Deletes the row; false when it was already gone. */
  readonly remove: (id: FileId) => Effect.Effect<boolean>
}>()("svc/FileRepo") {
  static readonly layer = Layer.effect(FileRepo)(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const select = (query: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
        query.pipe(
          Effect.flatMap(decodeRows),
          Effect.map((rows) =>
            rows.map((r): FileRow => ({
              id: r.id,
              organizationId: r.organization_id,
              workspaceId: r.workspace_id,
              filename: r.filename,
              mediaType: r.media_type,
              bytes: r.bytes,
              sha256: r.sha256,
              createdAt: r.created_at
            }))
          ),
          Effect.orDie
        )
      return {
        insert: Effect.fn("FileRepo.insert")(function*(r: FileRow) {
          yield* sql`INSERT INTO files (id, organization_id, workspace_id, filename, media_type, bytes, sha256, created_at)
            VALUES (${r.id}, ${r.organizationId}, ${r.workspaceId}, ${r.filename}, ${r.mediaType}, ${r.bytes}, ${r.sha256},
              ${r.createdAt})`.pipe(Effect.orDie)
        }),
        find: Effect.fn("FileRepo.find")(function*(id: FileId) {
          return Option.fromNullishOr(
            (yield* select(sql`SELECT ${sql.literal(columns)} FROM files WHERE id = ${id}`))[0]
          )
        }),
        list: Effect.fn("FileRepo.list")(function*(scope, limit, after) {
          const conditions = [
            sql`organization_id = ${scope.organizationId}`,
            sql`workspace_id = ${scope.workspaceId}`,
            ...(after === undefined ? [] : [sql`(created_at, id) < (${after.createdAt}, ${after.id})`])
          ]
          return yield* select(
            sql`SELECT ${sql.literal(columns)} FROM files WHERE ${sql.and(conditions)}
              ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}`
          )
        }),
        remove: Effect.fn("FileRepo.remove")(function*(id: FileId) {
          const rows = yield* sql`DELETE FROM files WHERE id = ${id} RETURNING id`.pipe(Effect.orDie)
          return rows.length > 0
        })
      }
    })
  )
}
