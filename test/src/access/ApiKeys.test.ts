/** What is kept of an API key beside its hash: a prefix that never gives most of a short key away. */
import { assert, describe, it } from "@effect/vitest"
import { displayPrefix } from "../../../src/access/ApiKeys.ts"

describe("API key display prefix", () => {
  it("keeps seven characters of a minted key", () => {
    assert.strictEqual(displayPrefix("sk_3h0Xr9aBcDeFgHiJkLmNoPqRsTu"), "sk_3h0X")
  })
  it("keeps at most a quarter of a short seeded key", () => {
    assert.strictEqual(displayPrefix("sk_test_acme_prod"), "sk_t")
    assert.strictEqual(displayPrefix("sk_a"), "s")
    assert.strictEqual(displayPrefix("abc"), "")
  })
})
