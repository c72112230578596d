/**
 * PostgreSQL administration for the benchmarks, with the project's own client
 * (no extra dependency): a fresh database per benchmark on 127.0.0.1:5432
 * (trust auth, user postgres; override with BENCH_POSTGRES_URL), its URL, and
 * the counters the benchmarks read.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"

export const adminUrl = process.env["BENCH_POSTGRES_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"

export type Row = Readonly<Record<string, unknown>>

/** One statement on the administration database (or `database`), on a connection of its own. */
export const adminQuery = (query: string, database?: string): Promise<ReadonlyArray<Row>> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(
        PgClient.make({
          url: Redacted.make(database === undefined ? adminUrl : databaseUrl(database)),
          maxConnections: 1,
          applicationName: "svc-bench-admin"
        }),
        (sql) => sql.unsafe<Row>(query)
      )
    ).pipe(Effect.provide(Reactivity.layer))
  )

export const databaseUrl = (name: string): string => {
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return url.toString()
}

export const num = (v: unknown): number =>
  typeof v === "number" ? v : typeof v === "string" || typeof v === "bigint" ? Number(v) : 0

export const serverVersion = async (): Promise<string> =>
  String((await adminQuery("SELECT version() AS version"))[0]?.["version"] ?? "unknown")

export interface DbStats {
  readonly xacts: number
  readonly written: number
  readonly fetched: number
  /** Rows read by scans (sequential and index), beside `fetched` (rows fetched by index scans). */
  readonly returned: number
}

/** Cumulative counters of a database (flushed by each backend about once a second). */
export const dbStats = async (name: string): Promise<DbStats> => {
  const rows = await adminQuery(
    `SELECT xact_commit + xact_rollback AS xacts, tup_inserted + tup_updated + tup_deleted AS written,
            tup_fetched AS fetched, tup_returned AS returned FROM pg_stat_database WHERE datname = '${name}'`
  )
  const row = rows[0] ?? {}
  return {
    xacts: num(row["xacts"]),
    written: num(row["written"]),
    fetched: num(row["fetched"]),
    returned: num(row["returned"])
  }
}

/** Server process ids of the connections to a database (a service's pool and its LISTEN connection). */
export const backendPids = async (name: string): Promise<ReadonlyArray<number>> =>
  (await adminQuery(`SELECT pid FROM pg_stat_activity WHERE datname = '${name}'`)).map((r) => num(r["pid"]))

/**
 * VACUUM ANALYZE of a database: what autovacuum would have done by then
 * (dead row versions of updated runs and threads removed from the indexes,
 * planner statistics), so a measurement sees a steady state even on a host
 * where autovacuum is off.
 */
export const vacuum = (name: string): Promise<ReadonlyArray<Row>> => adminQuery("VACUUM ANALYZE", name)

export const autovacuumSetting = async (): Promise<string> =>
  String((await adminQuery("SHOW autovacuum"))[0]?.["autovacuum"] ?? "unknown")
