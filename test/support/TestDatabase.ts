/**
 * A fresh PostgreSQL database per test file on the local server
 * (127.0.0.1:5432, trust auth), dropped when the scope closes.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { randomBytes } from "node:crypto"

export const adminUrl = process.env["TEST_POSTGRES_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"

/** Runs `f` with a client of its own on the database at `url`. */
export const withClient = <A, E>(url: string, f: (sql: PgClient.PgClient) => Effect.Effect<A, E>) =>
  Effect.scoped(
    Effect.flatMap(PgClient.make({ url: Redacted.make(url), maxConnections: 1 }), f)
  ).pipe(Effect.provide(Reactivity.layer), Effect.orDie)

const withAdmin = <A, E>(f: (sql: PgClient.PgClient) => Effect.Effect<A, E>) => withClient(adminUrl, f)

/** The rows of one statement on the database at `url`, over a connection of its own (e.g. what a service process stored). */
export const query = (url: string, statement: string) =>
  withClient(url, (sql) => sql.unsafe<Record<string, unknown>>(statement))

/** Creates `svc_test_<random>` and returns its URL; drops it (forcing disconnects) on release. */
export const testDatabase = Effect.acquireRelease(
  Effect.gen(function*() {
    const name = `svc_test_${randomBytes(6).toString("hex")}`
    yield* withAdmin((sql) => sql.unsafe(`CREATE DATABASE ${name}`))
    return { name, url: adminUrl.replace(/\/[^/]*$/, `/${name}`) }
  }),
  ({ name }) => withAdmin((sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
)
