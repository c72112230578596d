/**
 * Secret values injected into a workspace's environment never come back in
 * tool output: every occurrence becomes `***`, the longest secret first, and
 * a truncated output cannot end in the start of a secret.
 */
import { assert, describe, it } from "@effect/vitest"
import { maskSecrets } from "../../../src/workspace/SecretMask.ts"

describe("secret masking", () => {
  it("replaces every occurrence of every value", () => {
    assert.strictEqual(
      maskSecrets("TOKEN=tok_123\nagain tok_123, and pw hunter2.", ["tok_123", "hunter2"]),
      "TOKEN=***\nagain ***, and pw ***."
    )
  })

  it("masks a secret containing another as a whole, and ignores empty values", () => {
    assert.strictEqual(maskSecrets("key abcdef-XYZ", ["abc", "abcdef-XYZ", ""]), "key ***")
  })

  it("a truncated output that ends in the start of a secret has that tail masked", () => {
    assert.strictEqual(maskSecrets("value: sk_live_12", ["sk_live_123456"], { truncated: true }), "value: ***")
    assert.strictEqual(maskSecrets("value: sk_live_12", ["sk_live_123456"]), "value: sk_live_12")
  })

  it("a secret of several lines is masked whole, and line by line where output splits or prefixes it", () => {
    const pem = "-----BEGIN KEY-----\nMIIBOgIBAAJBALKey0123456789\nabcdefGHIJKLmnop+/==\n-----END KEY-----"
    assert.strictEqual(maskSecrets(`key:\n${pem}\n`, [pem]), "key:\n***\n")
    // As read_file numbers lines or grep shows one match.
    assert.strictEqual(maskSecrets("2\tMIIBOgIBAAJBALKey0123456789\n3\tabcdefGHIJKLmnop+/==", [pem]), "2\t***\n3\t***")
    assert.strictEqual(maskSecrets("k.pem:2:MIIBOgIBAAJBALKey0123456789", [pem]), "k.pem:2:***")
  })
})
