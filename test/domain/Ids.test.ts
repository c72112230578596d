/**
 * Branded ids: an id a client sends decodes to its kind's brand, an id of
 * another kind is refused, and the type checker keeps kinds apart (the
 * `@ts-expect-error` lines are the assertions: they fail the typecheck the day
 * a hook id fits where a secret id is expected).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Schema } from "effect"
import { ClientId, type HookId, type IdKind, IdPrefix, type SecretId, type WorkerId } from "../../domain/Ids.ts"
import { IdGenerator } from "../../src/IdGenerator.ts"

const body = "7Kd2LmQ9xR4tV8bN1cZ6hJ"

const revealSecret = (id: SecretId): string => id
const testHook = (id: HookId): string => id

const clientKinds: ReadonlyArray<keyof typeof ClientId> = [
  "agent",
  "thread",
  "run",
  "worker",
  "interaction",
  "followup",
  "toolServer",
  "httpConnection",
  "codehostConnection",
  "hook",
  "resultHandler",
  "secret",
  "secretContext",
  "file",
  "artifact"
]

describe("Ids", () => {
  it.each(clientKinds)("a %s id decodes; the same body under another kind's prefix is refused", (kind) => {
    const decode = Schema.decodeUnknownExit(ClientId[kind])
    const decoded = decode(IdPrefix[kind] + body)
    assert.isTrue(Exit.isSuccess(decoded) && decoded.value === IdPrefix[kind] + body)
    const other: IdKind = kind === "secret" ? "hook" : "secret"
    assert.isTrue(Exit.isFailure(decode(IdPrefix[other] + body)))
  })

  it("a decoded hook id is a HookId, never a SecretId", () => {
    const hook = Schema.decodeSync(ClientId.hook)(IdPrefix.hook + body)
    const secret = Schema.decodeSync(ClientId.secret)(IdPrefix.secret + body)
    assert.strictEqual(testHook(hook), IdPrefix.hook + body)
    assert.strictEqual(revealSecret(secret), IdPrefix.secret + body)
    // @ts-expect-error a hook id is not a secret id
    revealSecret(hook)
    // @ts-expect-error a plain string is no secret id: it needs a decode or the IdGenerator
    revealSecret(IdPrefix.secret + body)
  })

  it.effect("the IdGenerator mints each kind under its brand", () =>
    Effect.gen(function*() {
      const ids = yield* IdGenerator
      const worker: WorkerId = yield* ids.make("worker")
      const secret: SecretId = yield* ids.make("secret")
      assert.isTrue(worker.startsWith(IdPrefix.worker))
      assert.isTrue(secret.startsWith(IdPrefix.secret))
      // @ts-expect-error a minted hook id is not a secret id
      const wrong: SecretId = yield* ids.make("hook")
      assert.isTrue(wrong.startsWith(IdPrefix.hook))
    }).pipe(Effect.provide(IdGenerator.layer)))
})
