/**
 * Ids: the base62 encoding is the one every stored id and every derived id
 * (a replayed step's tool calls) was written in, so the fast encoder must give
 * the digits of the plain big-number conversion for every input; minted ids
 * have their kind's prefix, 22 characters of base62, and never repeat.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"
import { createHash } from "node:crypto"
import { base62, IdGenerator } from "../../src/IdGenerator.ts"

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/** The reference: the bytes as one BigInt, written in base 62. */
const reference = (bytes: Uint8Array, width: number): string => {
  let n = 0n
  for (const b of bytes) n = (n << 8n) | BigInt(b)
  let out = ""
  while (n > 0n) {
    out = alphabet[Number(n % 62n)] + out
    n /= 62n
  }
  return out.padStart(width, "0")
}

const sha256 = (seed: string) => createHash("sha256").update(seed).digest().subarray(0, 16)

describe("IdGenerator", () => {
  it("base62 gives the big-number digits: fixed vectors", () => {
    assert.strictEqual(base62(new Uint8Array(16), 22), "0000000000000000000000")
    assert.strictEqual(base62(new Uint8Array(16).fill(255), 22), "7n42DGM5Tflk9n8mt7Fhc7")
    assert.strictEqual(base62(Uint8Array.from([0, 0, 0, 61]), 6), "00000z")
    assert.strictEqual(base62(Uint8Array.from([0, 0, 0, 62]), 6), "000010")
    assert.strictEqual(base62(Uint8Array.from([1, 0]), 3), "048")
    assert.strictEqual(base62(new Uint8Array(32).fill(255), 43), reference(new Uint8Array(32).fill(255), 43))
  })

  it("base62 gives the big-number digits for any bytes (odd and even lengths)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 40 }), (bytes) => {
        const width = Math.ceil((bytes.length * 8) / Math.log2(62))
        assert.strictEqual(base62(bytes, width), reference(bytes, width))
      }),
      { numRuns: 2000 }
    )
  })

  it.effect("minted ids: prefix, 22 base62 characters, none repeated; derived ids are stable", () =>
    Effect.gen(function*() {
      const ids = yield* IdGenerator
      const minted = new Set<string>()
      for (let i = 0; i < 1000; i++) minted.add(yield* ids.make("thread"))
      assert.strictEqual(minted.size, 1000)
      for (const id of minted) assert.match(id, /^thread_[0-9A-Za-z]{22}$/)
      assert.strictEqual(ids.derive("toolCall", "run_x:step:0"), ids.derive("toolCall", "run_x:step:0"))
      assert.strictEqual(ids.derive("run", "seed"), "run_" + reference(sha256("seed"), 22))
    }).pipe(Effect.provide(IdGenerator.layer)))
})
