/**
 * An Idempotency-Key record names the process that claimed it: a request
 * still in flight on a live process answers 503 to a retry, but a record left
 * pending by a process that died (killed while handling the request) is taken
 * over by the retry, which runs, instead of answering 503 for 24 hours.
 */
import { PgClient } from "@effect/sql-pg"
import { assert, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Redacted, Ref, Schema } from "effect"
import type { Principal } from "../../../domain/Principal.ts"
import { Idempotency, type IdempotentRequest } from "../../../src/access/Idempotency.ts"
import { NodeId } from "../../../src/NodeId.ts"
import * as Database from "../../../src/store/Database.ts"
import * as Migrations from "../../../src/store/Migrations.ts"
import { testDatabase } from "../../support/TestDatabase.ts"

const live = "node_idemownerlive00000001"

const Harness = Layer.unwrap(
  Effect.map(testDatabase, (db) =>
    Idempotency.layer.pipe(
      Layer.provide(Layer.succeed(NodeId)(live)),
      Layer.provide(Migrations.layer),
      Layer.provideMerge(Database.layerUrl(Redacted.make(db.url)))
    ))
)

const principal: Principal = { keyId: "key_1", organizationId: "org_1", workspaceId: "prod" }
const request = (key: string): IdempotentRequest => ({
  principal,
  method: "POST",
  path: "/v1/things",
  key,
  body: { a: 1 }
})
const replayable = { schema: Schema.Struct({ n: Schema.Number }), status: 201 }

layer(Harness, { timeout: 60_000 })("idempotency records of a process that died", (it) => {
  it.effect("a retry waits (503) while the claiming process lives, and runs once it is dead", () =>
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const idempotency = yield* Idempotency
      // This process beats (as NodeRepo does); the database sessions are not checked without a ServiceConfig.
      yield* sql`INSERT INTO svc_nodes (id, started_at, heartbeat_at) VALUES (${live}, now(), now() + interval '1 hour')`
      const started = yield* Deferred.make<void>()
      const gate = yield* Deferred.make<void>()
      const first = yield* Effect.forkChild(
        idempotency.run(
          request("K"),
          replayable,
          Effect.andThen(Deferred.succeed(started, undefined), Effect.as(Deferred.await(gate), { n: 1 }))
        )
      )
      yield* Deferred.await(started)
      const runs = yield* Ref.make(0)
      const retry = idempotency.run(request("K"), replayable, Effect.as(Ref.update(runs, (n) => n + 1), { n: 2 }))

      const waiting = yield* Effect.flip(retry)
      assert.strictEqual(waiting.code, "service_unavailable")
      const [claimed] = yield* sql<
        { readonly claimed_by: string }
      >`SELECT claimed_by FROM idempotency_keys WHERE key = 'K'`
      assert.strictEqual(claimed?.claimed_by, live)

      // The process that claimed it died mid-request (another node id, no heartbeat): the retry takes the key over and runs.
      yield* sql`UPDATE idempotency_keys SET claimed_by = 'node_idemownerdead0000001' WHERE key = 'K'`
      assert.deepStrictEqual(yield* retry, { n: 2 })
      assert.strictEqual(yield* Ref.get(runs), 1)
      // Its answer is the one remembered.
      assert.deepStrictEqual(yield* retry, { n: 2 })
      assert.strictEqual(yield* Ref.get(runs), 1)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(first)
    }))
})
