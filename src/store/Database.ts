/**
 * The SQL client: PostgreSQL through `@effect/sql-pg` when DATABASE_URL is set;
 * otherwise an embedded PostgreSQL (PGlite) under SVC_DATA_DIR, served to the
 * same client over a private unix socket on a single connection. Same SQL and
 * migrations either way.
 */
import { PgClient } from "@effect/sql-pg"
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Effect, Layer, Option } from "effect"
import type { SqlClient } from "effect/sql"
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { NodeId } from "../NodeId.ts"

/** Which storage the process runs on; the cluster layer picks its runner from it. */
export type StorageMode = "postgres" | "embedded"

const lockFile = (dataDir: string) => join(dataDir, "svc.pid")

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * Opens PGlite on `dataDir` and serves it on a unix socket. Only one process
 * may own a data directory: a pid file guards it.
 */
export const embeddedPostgres = (dataDir: string) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const dir = resolve(dataDir)
        mkdirSync(dir, { recursive: true, mode: 0o700 })
        const lock = lockFile(dir)
        if (existsSync(lock)) {
          const pid = Number(readFileSync(lock, "utf8"))
          if (Number.isInteger(pid) && pid !== process.pid && isAlive(pid)) {
            throw new Error(`the embedded database in ${dir} is in use by process ${pid}; stop it first`)
          }
        }
        writeFileSync(lock, String(process.pid))
        const db = await PGlite.create(join(dir, "pgdata"))
        const socketPath = join(tmpdir(), `svc-pglite-${process.pid}-${Math.abs(hash(dir))}.sock`)
        rmSync(socketPath, { force: true })
        const server = new PGLiteSocketServer({ db, path: socketPath })
        await server.start()
        return { db, server, socketPath, lock }
      },
      catch: (cause) => new Error(`cannot open the embedded database: ${String(cause)}`, { cause })
    }).pipe(Effect.orDie),
    ({ db, server, socketPath, lock }) =>
      Effect.promise(async () => {
        await server.stop()
        await db.close()
        rmSync(socketPath, { force: true })
        rmSync(lock, { force: true })
      })
  )

const hash = (s: string): number => {
  let h = 0
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0
  return h
}

/** A PgClient on a PGlite data directory (single connection). */
export const layerEmbedded = (dataDir: string): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient> =>
  Layer.unwrap(
    Effect.map(embeddedPostgres(dataDir), ({ socketPath }) =>
      PgClient.layer({ path: socketPath, database: "postgres", username: "postgres", maxConnections: 1 }))
  ).pipe(Layer.orDie)

/**
 * A pool on PostgreSQL. Its sessions carry the process's node id as `application_name`: a
 * process whose sessions are gone from `pg_stat_activity` has died (RecoveryRepo).
 */
export const layerUrl = (url: Parameters<typeof PgClient.layer>[0]["url"], nodeId?: string) =>
  PgClient.layer({ url, maxConnections: 10, ...(nodeId === undefined ? {} : { applicationName: nodeId }) }).pipe(
    Layer.orDie
  )

/** Picks the storage from configuration. */
export const layer: Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, never, ServiceConfig> = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* ServiceConfig
    const nodeId = yield* Effect.serviceOption(NodeId)
    return Option.match(config.databaseUrl, {
      onNone: () => layerEmbedded(config.dataDir),
      onSome: (url) => layerUrl(url, Option.getOrUndefined(nodeId))
    })
  })
)
