/**
 * The leak scanner finds what it claims to (so its zero hits mean
 * something): a value written as is, JSON-escaped, percent-encoded, in hex,
 * or inside base64 / base64url at any byte offset.
 */
import { assert, describe, it } from "@effect/vitest"
import { scan } from "../../support/SecretScan.ts"

const value = "LEAK_probe_0123456789/+=\"x"

describe("secret scanner", () => {
  it.each([
    ["plain", `header: ${value}`],
    ["json", JSON.stringify({ a: value })],
    ["url-component", `https://api.test/x?k=${encodeURIComponent(value)}`],
    ["form-field", `k=${new URLSearchParams({ v: value }).toString().slice(2)}&z=1`],
    ["hex", Buffer.from(`..${value}..`).toString("hex")],
    ["base64 at offset 0", Buffer.from(value).toString("base64")],
    ["base64 at offset 1", Buffer.from(`a${value}b`).toString("base64")],
    ["base64 at offset 2", Buffer.from(`ab${value}`).toString("base64")],
    ["base64url at offset 1", Buffer.from(`:${value}:`).toString("base64url")],
    ["upper-case hex", Buffer.from(value).toString("hex").toUpperCase()]
  ])("finds the %s form", (_, text) => {
    assert.isAbove(scan({ probe: value }, [{ where: "text", text }]).length, 0)
  })

  it("finds nothing in text without the value", () => {
    assert.deepStrictEqual(
      scan({ probe: value }, [{
        where: "text",
        text: `LEAK_probe_012345678 ${Buffer.from("LEAK_probe").toString("base64")}`
      }]),
      []
    )
  })
})
