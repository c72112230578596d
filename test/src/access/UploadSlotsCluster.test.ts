/**
 * SVC_MAX_CONCURRENT_UPLOADS_PER_KEY holds across the cluster: two service
 * processes' upload slots (each its own database pool, its sessions named by
 * its node id, and its heartbeat, as in a deployment) on one PostgreSQL
 * database. A key's uploads on one count on the other; a freed slot is free
 * for both; a process that is killed mid-upload (its heartbeat row still
 * fresh, its sessions gone) holds nothing any more.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Option, Redacted, Scope, Stream } from "effect"
import type { Principal } from "../../../domain/Principal.ts"
import { UploadSlots } from "../../../src/access/UploadSlots.ts"
import { ServiceConfig } from "../../../src/config/ServiceConfig.ts"
import { NodeId } from "../../../src/NodeId.ts"
import * as Database from "../../../src/store/Database.ts"
import * as Migrations from "../../../src/store/Migrations.ts"
import { NodeRepo } from "../../../src/store/NodeRepo.ts"
import { query, testDatabase } from "../../support/TestDatabase.ts"
import { baseConfig } from "../../support/TestServer.ts"

const principal = (keyId: string): Principal => ({ keyId, organizationId: "org_1", workspaceId: "prod" })
const refusal = "This API key already has 2 uploads in progress, the most it may have at once " +
  "(SVC_MAX_CONCURRENT_UPLOADS_PER_KEY); retry after 1 s."

/** One service process's upload slots: its own pool (sessions named by its node id) and heartbeat. */
const startNode = (url: string, nodeId: string) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(
      Layer.mergeAll(UploadSlots.layer, NodeRepo.layer).pipe(
        Layer.provide(
          Layer.mergeAll(
            Layer.succeed(NodeId)(nodeId),
            Layer.succeed(ServiceConfig)(baseConfig(url, 0)),
            Database.layerUrl(Redacted.make(url), nodeId)
          )
        )
      ),
      scope
    )
    return { slots: Context.get(context, UploadSlots), stop: Scope.close(scope, Exit.void) }
  })

/** Takes a slot of the key in a scope of its own (an upload in flight until `end`). */
const upload = (slots: UploadSlots["Service"], keyId: string) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const exit = yield* Effect.exit(Scope.provide(slots.acquire(principal(keyId)), scope))
    return { exit, end: Scope.close(scope, Exit.void) }
  })

const slotRows = (url: string) =>
  Effect.map(
    query(url, "SELECT key_id, slot, node_id FROM upload_slots ORDER BY key_id, slot"),
    (rows) => rows.map((r) => `${String(r["key_id"])}/${String(r["slot"])}@${String(r["node_id"])}`)
  )

const refusedWith = (exit: Exit.Exit<void, { readonly code: string; readonly message: string }>) =>
  assert.deepStrictEqual(
    Option.map(Exit.findErrorOption(exit), (error) => [error.code, error.message]),
    Option.some(["rate_limited", refusal])
  )

/** The uploads a process has in flight per key, as its `inFlight` shows them now. */
const inFlightOf = (slots: UploadSlots["Service"]) =>
  Effect.map(Stream.runHead(slots.inFlight), (now) => [...Option.getOrElse(now, () => new Map())])

describe("upload slots across processes", () => {
  it.live(
    "two processes share a key's 2 slots: a third upload on either is refused, another key is not, a freed slot serves either",
    () =>
      Effect.gen(function*() {
        const db = yield* testDatabase
        yield* Migrations.run.pipe(Effect.provide(Database.layerUrl(Redacted.make(db.url))), Effect.orDie)
        const a = yield* startNode(db.url, "node_uploadsa000000000001")
        const b = yield* startNode(db.url, "node_uploadsb000000000001")

        const first = yield* upload(a.slots, "key_1")
        const second = yield* upload(b.slots, "key_1")
        assert.deepStrictEqual([first.exit, second.exit].map(Exit.isSuccess), [true, true])
        assert.deepStrictEqual(yield* slotRows(db.url), [
          "key_1/0@node_uploadsa000000000001",
          "key_1/1@node_uploadsb000000000001"
        ])
        // Each process sees only its own uploads in flight.
        assert.deepStrictEqual(yield* inFlightOf(a.slots), [["key_1", 1]])
        assert.deepStrictEqual(yield* inFlightOf(b.slots), [["key_1", 1]])

        refusedWith((yield* upload(a.slots, "key_1")).exit)
        refusedWith((yield* upload(b.slots, "key_1")).exit)
        const other = yield* upload(a.slots, "key_2")
        assert.isTrue(Exit.isSuccess(other.exit))

        // B's upload ends: its slot serves A's next one.
        yield* second.end
        const third = yield* upload(a.slots, "key_1")
        assert.isTrue(Exit.isSuccess(third.exit))
        refusedWith((yield* upload(b.slots, "key_1")).exit)
        assert.deepStrictEqual(yield* slotRows(db.url), [
          "key_1/0@node_uploadsa000000000001",
          "key_1/1@node_uploadsa000000000001",
          "key_2/0@node_uploadsa000000000001"
        ])
        for (const held of [first, third, other]) yield* held.end
        assert.deepStrictEqual(yield* slotRows(db.url), [])
        yield* a.stop
        yield* b.stop
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "a process killed mid-upload holds no slot: its heartbeat is still fresh but its sessions are gone",
    () =>
      Effect.gen(function*() {
        const db = yield* testDatabase
        yield* Migrations.run.pipe(Effect.provide(Database.layerUrl(Redacted.make(db.url))), Effect.orDie)
        const dying = "node_uploadsdying00000001"
        const a = yield* startNode(db.url, dying)
        const b = yield* startNode(db.url, "node_uploadsb000000000002")
        for (let i = 0; i < 2; i++) assert.isTrue(Exit.isSuccess((yield* upload(a.slots, "key_1")).exit))
        refusedWith((yield* upload(b.slots, "key_1")).exit)

        // A dies with its two uploads in flight (their slots never released): its pool is gone, and as after a kill
        // its heartbeat row is left behind, fresh. PostgreSQL's end of its sessions is awaited.
        yield* a.stop
        yield* query(
          db.url,
          `INSERT INTO svc_nodes (id, started_at, heartbeat_at) VALUES ('${dying}', now(), now() + interval '1 hour')`
        )
        yield* query(
          db.url,
          `SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE application_name = '${dying}'`
        )
        assert.deepStrictEqual(yield* slotRows(db.url), [`key_1/0@${dying}`, `key_1/1@${dying}`])

        const after = [yield* upload(b.slots, "key_1"), yield* upload(b.slots, "key_1")]
        assert.deepStrictEqual(after.map((u) => Exit.isSuccess(u.exit)), [true, true])
        assert.deepStrictEqual(yield* slotRows(db.url), [
          "key_1/0@node_uploadsb000000000002",
          "key_1/1@node_uploadsb000000000002"
        ])
        yield* b.stop
      }).pipe(Effect.scoped),
    60_000
  )
})
