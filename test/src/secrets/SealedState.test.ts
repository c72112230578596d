/**
 * Sealed runtime state, without a database: bytes sealed under the current
 * master key (iv + tag + ciphertext, a fresh iv each time) open under it and,
 * after a rotation, under the same key kept as a previous one; they fail with
 * SealedUnreadable when the key is no longer configured, when a byte is
 * altered, and when opened as another owner's or another kind of state.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { contextOf, SealedState, type StateKind } from "../../../src/secrets/SealedState.ts"
import { parseMasterKey, SecretBox } from "../../../src/secrets/SecretBox.ts"

const keyOf = (byte: number) => {
  const parsed = parseMasterKey(Buffer.alloc(32, byte).toString("base64"))
  if (typeof parsed === "string") throw new Error(parsed)
  return parsed
}
const oldKey = keyOf(1)
const newKey = keyOf(2)
const before = SealedState.make(SecretBox.make(oldKey, []))
const rotated = SealedState.make(SecretBox.make(newKey, [oldKey]))
const withoutOld = SealedState.make(SecretBox.make(newKey, []))
const plaintext = new TextEncoder().encode("a workspace archive's bytes")

describe("sealed runtime state", () => {
  it.effect("seals under the current key with a fresh iv; opens after the key rotated, while the old key is kept", () =>
    Effect.gen(function*() {
      const sealed = yield* before.seal("workspace_snapshot", "thread_a", plaintext)
      const twin = yield* before.seal("workspace_snapshot", "thread_a", plaintext)
      assert.strictEqual(sealed.keyId, oldKey.id)
      assert.strictEqual(sealed.data.byteLength, 28 + plaintext.byteLength)
      assert.notDeepEqual(sealed.data, twin.data)
      assert.deepStrictEqual(yield* before.open("workspace_snapshot", "thread_a", sealed), plaintext)
      assert.deepStrictEqual(yield* rotated.open("workspace_snapshot", "thread_a", sealed), plaintext)
      const resealed = yield* rotated.seal("workspace_snapshot", "thread_a", plaintext)
      assert.strictEqual(resealed.keyId, newKey.id)
      assert.strictEqual(rotated.currentKeyId, newKey.id)
      assert.deepStrictEqual(yield* withoutOld.open("workspace_snapshot", "thread_a", resealed), plaintext)
    }))

  it.effect.each<{ readonly name: string; readonly kind: StateKind; readonly owner: string; readonly flip: boolean }>([
    { name: "another owner", kind: "workspace_snapshot", owner: "thread_b", flip: false },
    { name: "another kind of state", kind: "browser_profile", owner: "thread_a", flip: false },
    { name: "an altered byte", kind: "workspace_snapshot", owner: "thread_a", flip: true }
  ])("fails to open for $name", ({ flip, kind, owner }) =>
    Effect.gen(function*() {
      const sealed = yield* before.seal("workspace_snapshot", "thread_a", plaintext)
      const data = Buffer.from(sealed.data)
      if (flip) data[data.length - 1] ^= 0x80
      const error = yield* Effect.flip(before.open(kind, owner, { keyId: sealed.keyId, data }))
      assert.strictEqual(error._tag, "SealedUnreadable")
      assert.strictEqual(
        error.message,
        `it failed authentication under master key ${oldKey.id} (altered, or sealed for another owner)`
      )
    }))

  it.effect("fails to open state sealed under a key no longer configured, naming that key", () =>
    Effect.gen(function*() {
      const sealed = yield* before.seal("workspace_snapshot", "thread_a", plaintext)
      const error = yield* Effect.flip(withoutOld.open("workspace_snapshot", "thread_a", sealed))
      assert.strictEqual(
        error.message,
        `it was sealed with master key ${oldKey.id}, which is not configured (SVC_MASTER_KEY_PREVIOUS)`
      )
      const short = yield* Effect.flip(
        before.open("workspace_snapshot", "thread_a", { keyId: oldKey.id, data: new Uint8Array(5) })
      )
      assert.strictEqual(short._tag, "SealedUnreadable")
    }))

  it("binds state to its kind and owner", () => {
    assert.strictEqual(contextOf("workspace_snapshot", "thread_a"), "svc-state:workspace_snapshot:thread_a")
  })
})
