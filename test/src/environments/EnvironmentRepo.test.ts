/**
 * A runner's liveness on the service's clock (EnvironmentRepo, real
 * PostgreSQL): handed a call, a runner that does not poll again within 5 s is
 * dropped and its command answered `{ lost: true }`; one that polls again
 * stays until it has been silent 45 s, then its read is queued again for
 * another runner. The times a user reads (`connectedAt`, `lastHeartbeatAt`)
 * are the service's too. TestClock moves every window; the database's own
 * clock does not.
 */
import { PgClient } from "@effect/sql-pg"
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { ServiceConfig } from "../../../src/config/ServiceConfig.ts"
import { EnvironmentRepo } from "../../../src/environments/EnvironmentRepo.ts"
import { EnvironmentSignals } from "../../../src/environments/EnvironmentSignals.ts"
import * as Database from "../../../src/store/Database.ts"
import * as Migrations from "../../../src/store/Migrations.ts"
import { nowIso } from "../../../src/Time.ts"
import { testDatabase } from "../../support/TestDatabase.ts"
import { baseConfig } from "../../support/TestServer.ts"

const Repo = Layer.unwrap(
  Effect.map(testDatabase, (db) =>
    EnvironmentRepo.layer.pipe(
      Layer.provide(EnvironmentSignals.layer),
      Layer.provideMerge(Migrations.layer),
      Layer.provideMerge(Database.layerUrl(Redacted.make(db.url))),
      Layer.provide(Layer.succeed(ServiceConfig)(baseConfig(db.url, 0)))
    ))
)

/** An environment row (the runners' and calls' foreign key). */
const environment = (id: string) =>
  Effect.flatMap(
    PgClient.PgClient,
    (sql) =>
      sql`INSERT INTO environments (id, organization_id, workspace_id, name, config, metadata, config_version,
        created_at, updated_at)
      VALUES (${id}, 'org_acme', 'prod', ${id}, ${sql.json({ tokenHash: `hash-${id}` })}, '{}', 1,
        '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`.pipe(Effect.orDie)
  )

const runner = (id: string, environmentId: string) => ({
  id,
  environmentId,
  tokenHash: `hash-${environmentId}`,
  hostName: "build-box.local",
  version: "1.2.3"
})

layer(Repo, { timeout: 60_000 })("environment runners' liveness", (it) => {
  it.effect("handed a call and not polling again within 5 s, a runner is dropped and its command answered lost", () =>
    Effect.gen(function*() {
      const repo = yield* EnvironmentRepo
      yield* environment("env_repoll")
      const connectedAt = yield* nowIso
      assert.isTrue(yield* repo.heartbeat(runner("runner-a", "env_repoll")))
      yield* repo.insertCall({ id: "call-a", environmentId: "env_repoll", tool: "bash", input: {}, retryable: false })
      assert.strictEqual((yield* repo.claim("env_repoll", "runner-a"))._tag, "Some")
      yield* TestClock.adjust("4 seconds")
      yield* repo.dropStale("env_repoll")
      assert.deepStrictEqual(yield* repo.callState("call-a"), { state: "claimed" })
      assert.deepStrictEqual(yield* repo.runners("env_repoll"), [
        { hostName: "build-box.local", version: "1.2.3", connectedAt, lastHeartbeatAt: connectedAt }
      ])
      yield* TestClock.adjust("2 seconds")
      yield* repo.dropStale("env_repoll")
      assert.deepStrictEqual(yield* repo.callState("call-a"), { state: "done", result: { lost: true } })
      assert.deepStrictEqual(yield* repo.runners("env_repoll"), [])
    }))

  it.effect("a runner that polls again stays until silent for 45 s; then its read is queued again", () =>
    Effect.gen(function*() {
      const repo = yield* EnvironmentRepo
      yield* environment("env_silent")
      const connectedAt = yield* nowIso
      yield* repo.heartbeat(runner("runner-b", "env_silent"))
      yield* repo.insertCall({ id: "call-b", environmentId: "env_silent", tool: "glob", input: {}, retryable: true })
      assert.strictEqual((yield* repo.claim("env_silent", "runner-b"))._tag, "Some")
      yield* TestClock.adjust("1 second")
      const heardAt = yield* nowIso
      assert.isFalse(yield* repo.heartbeat(runner("runner-b", "env_silent")))
      yield* TestClock.adjust("44 seconds")
      yield* repo.dropStale("env_silent")
      assert.deepStrictEqual(yield* repo.callState("call-b"), { state: "claimed" })
      assert.deepStrictEqual(yield* repo.runners("env_silent"), [
        { hostName: "build-box.local", version: "1.2.3", connectedAt, lastHeartbeatAt: heardAt }
      ])
      yield* TestClock.adjust("1 second")
      yield* repo.dropStale("env_silent")
      assert.deepStrictEqual(yield* repo.callState("call-b"), { state: "pending" })
      assert.deepStrictEqual(yield* repo.runners("env_silent"), [])
    }))
})
