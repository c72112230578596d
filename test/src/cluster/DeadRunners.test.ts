/**
 * A registered runner whose process's database sessions are all gone (killed)
 * is marked unhealthy at once, so the cluster reassigns its shards without
 * waiting for its heartbeat to age; a runner on an address a live process
 * claims, or one registered since its address's last owner died, is left alone.
 * Rows are staged in the cluster's own runner table (its migrations) and in
 * svc_nodes; this process's sessions carry its node id, as a runner's do.
 */
import { PgClient } from "@effect/sql-pg"
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { SqlRunnerStorage } from "effect/cluster"
import { markDeadRunners } from "../../../src/cluster/DeadRunners.ts"
import * as Database from "../../../src/store/Database.ts"
import * as Migrations from "../../../src/store/Migrations.ts"
import { testDatabase } from "../../support/TestDatabase.ts"

const live = "node_deadrunnerslive000001"

const Harness = Layer.unwrap(
  Effect.map(testDatabase, (db) =>
    Layer.mergeAll(Migrations.layer, SqlRunnerStorage.layerMigrations({})).pipe(
      Layer.provideMerge(Database.layerUrl(Redacted.make(db.url), live))
    ))
)

layer(Harness, { timeout: 60_000 })("dead runners", (it) => {
  it.effect("only the runners of processes with no session left are marked, once", () =>
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const node = (id: string, address: string, beatSecondsAgo: number) =>
        sql`INSERT INTO svc_nodes (id, started_at, heartbeat_at, runner_address)
          VALUES (${id}, now(), now() - make_interval(secs => ${beatSecondsAgo}), ${address})`
      const runner = (address: string, beatSecondsAgo: number) =>
        sql`INSERT INTO cluster_runners (address, runner, healthy, last_heartbeat)
          VALUES (${address}, ${`{"address":"${address}"}`}, true, now() - make_interval(secs => ${beatSecondsAgo}))`
      // Killed half a second ago: its runner beat last just before its process did.
      yield* node("node_deadrunnerskilled00001", "10.0.0.1:34431", 0.5)
      yield* runner("10.0.0.1:34431", 0.6)
      // Killed a minute ago; a replacement on its address registered in the cluster, not yet in svc_nodes.
      yield* node("node_deadrunnersold0000001", "10.0.0.2:34431", 60)
      yield* runner("10.0.0.2:34431", 0)
      // Killed, but a live process (this one) serves the address now.
      yield* node("node_deadrunnersprev000001", "10.0.0.3:34431", 5)
      yield* node(live, "10.0.0.3:34431", 0)
      yield* runner("10.0.0.3:34431", 5)
      // A live runner.
      yield* runner("10.0.0.4:34431", 0)

      assert.deepStrictEqual(yield* markDeadRunners(sql), ["10.0.0.1:34431"])
      const rows = yield* sql<
        { address: string; healthy: boolean }
      >`SELECT address, healthy FROM cluster_runners ORDER BY address`
      assert.deepStrictEqual(rows.map((r) => [r.address, r.healthy]), [
        ["10.0.0.1:34431", false],
        ["10.0.0.2:34431", true],
        ["10.0.0.3:34431", true],
        ["10.0.0.4:34431", true]
      ])
      // Already unhealthy: not marked (nor logged) again.
      assert.deepStrictEqual(yield* markDeadRunners(sql), [])
    }))
})
