/**
 * The result handler response contract (spec 4.5, 8), rule by rule: what a
 * 2xx body must hold, how `block` and `suggested_block_refs` are normalized
 * into `ref`, the size bounds (measured in bytes), and the artifactId that
 * oversized tool-result recovery requires.
 */
import { assert, describe, it } from "@effect/vitest"
import type { HandlerAnswer } from "../../../domain/ResultHandler.ts"
import { parse, type Purpose, ResponseLimits } from "../../../src/resultHandlers/HandlerResponse.ts"

const json = (value: unknown) => JSON.stringify(value)
const url = "https://files.example.com/a/1"

interface Row {
  readonly name: string
  readonly body: string
  readonly purpose?: Purpose
  /** The normalized answer, or the message the body is refused with. */
  readonly expect: { readonly answer: HandlerAnswer } | { readonly invalid: string }
}

const valid = (answer: HandlerAnswer) => ({ answer })
const invalid = (message: string) => ({ invalid: message })

/** A metadata object whose JSON is exactly `bytes` bytes. */
const metadataOf = (bytes: number) => ({ k: "x".repeat(bytes - json({ k: "" }).length) })

const rows: ReadonlyArray<Row> = [
  // Durable locators.
  { name: "artifactId alone", body: json({ artifactId: "a-1" }), expect: valid({ artifactId: "a-1" }) },
  { name: "url alone (export)", body: json({ url }), expect: valid({ url }) },
  {
    name: "url alone is not enough for an oversized result",
    body: json({ url }),
    purpose: "overflow",
    expect: invalid("the response has no artifactId, which oversized tool-result recovery requires")
  },
  {
    name: "artifactId and url",
    body: json({ artifactId: "a-1", url }),
    purpose: "overflow",
    expect: valid({ artifactId: "a-1", url })
  },
  { name: "neither", body: json({}), expect: invalid("the response has neither artifactId nor url") },
  {
    name: "ref alone",
    body: json({ ref: { kind: "drive", id: "f1" } }),
    expect: invalid("the response has ref or block but neither artifactId nor url (a durable locator is required)")
  },
  {
    name: "block alone",
    body: json({ block: "![x](y)" }),
    expect: invalid("the response has ref or block but neither artifactId nor url (a durable locator is required)")
  },
  {
    name: "suggested_block_refs alone",
    body: json({ suggested_block_refs: { drive: "d" } }),
    expect: invalid("the response has ref or block but neither artifactId nor url (a durable locator is required)")
  },
  {
    name: "null counts as absent",
    body: json({ artifactId: "a-1", url: null, ref: null, metadata: null, block: null }),
    expect: valid({ artifactId: "a-1" })
  },
  {
    name: "empty artifactId",
    body: json({ artifactId: "", url }),
    expect: invalid("artifactId must be a non-empty string")
  },
  {
    name: "numeric artifactId",
    body: json({ artifactId: 7 }),
    expect: invalid("artifactId must be a non-empty string")
  },
  { name: "relative url", body: json({ url: "/a/1" }), expect: invalid("url must be an absolute http or https URL") },
  {
    name: "non-http url",
    body: json({ url: "ftp://files.example.com/a" }),
    expect: invalid("url must be an absolute http or https URL")
  },
  {
    name: "http url",
    body: json({ url: "http://files.example.com/a" }),
    expect: valid({ url: "http://files.example.com/a" })
  },
  // ref and its normalization.
  {
    name: "a full ref",
    body: json({ artifactId: "a-1", ref: { kind: "drive", id: "f1", url, block: "[[f1]]", extra: 1 } }),
    expect: valid({ artifactId: "a-1", ref: { kind: "drive", id: "f1", url, block: "[[f1]]" } })
  },
  {
    name: "top-level block becomes ref.block",
    body: json({ artifactId: "a-1", block: "[[b]]" }),
    expect: valid({ artifactId: "a-1", ref: { block: "[[b]]" } })
  },
  {
    name: "suggested_block_refs.drive becomes ref.block",
    body: json({ artifactId: "a-1", ref: { id: "f1" }, suggested_block_refs: { drive: "[[d]]" } }),
    expect: valid({ artifactId: "a-1", ref: { id: "f1", block: "[[d]]" } })
  },
  {
    name: "ref.block wins over block, which wins over suggested_block_refs",
    body: json({
      artifactId: "a-1",
      ref: { block: "[[r]]" },
      block: "[[b]]",
      suggested_block_refs: { drive: "[[d]]" }
    }),
    expect: valid({ artifactId: "a-1", ref: { block: "[[r]]" } })
  },
  {
    name: "block wins over suggested_block_refs",
    body: json({ artifactId: "a-1", block: "[[b]]", suggested_block_refs: { drive: "[[d]]" } }),
    expect: valid({ artifactId: "a-1", ref: { block: "[[b]]" } })
  },
  {
    name: "ref that is not an object",
    body: json({ artifactId: "a-1", ref: "f1" }),
    expect: invalid("ref must be an object { kind?, id?, url?, block? }")
  },
  {
    name: "suggested_block_refs without drive",
    body: json({ artifactId: "a-1", suggested_block_refs: { other: "x" } }),
    expect: invalid("suggested_block_refs must be { drive: string }")
  },
  {
    name: "ref.url not http(s)",
    body: json({ artifactId: "a-1", ref: { url: "javascript:alert(1)" } }),
    expect: invalid("ref.url must be an absolute http or https URL")
  },
  {
    name: "ref.kind over its bound",
    body: json({ artifactId: "a-1", ref: { kind: "k".repeat(ResponseLimits.refKindBytes + 1) } }),
    expect: invalid("ref.kind is over its limit of 64 bytes")
  },
  {
    name: "ref.id over its bound",
    body: json({ artifactId: "a-1", ref: { id: "i".repeat(ResponseLimits.refIdBytes + 1) } }),
    expect: invalid("ref.id is over its limit of 1024 bytes")
  },
  {
    name: "block over its bound (bytes, not characters)",
    body: json({ artifactId: "a-1", block: "é".repeat(ResponseLimits.blockBytes / 2 + 1) }),
    expect: invalid("block is over its limit of 16384 bytes")
  },
  {
    name: "block at its bound",
    body: json({ artifactId: "a-1", block: "é".repeat(ResponseLimits.blockBytes / 2) }),
    expect: valid({ artifactId: "a-1", ref: { block: "é".repeat(ResponseLimits.blockBytes / 2) } })
  },
  {
    name: "artifactId over its bound",
    body: json({ artifactId: "a".repeat(ResponseLimits.artifactIdBytes + 1) }),
    expect: invalid("artifactId is over its limit of 1024 bytes")
  },
  {
    name: "url over its bound",
    body: json({ url: `${url}?${"q".repeat(ResponseLimits.urlBytes)}` }),
    expect: invalid("url is over its limit of 2048 bytes")
  },
  // metadata.
  {
    name: "metadata kept as given",
    body: json({ artifactId: "a-1", metadata: { pages: 3, tags: ["x"] } }),
    expect: valid({ artifactId: "a-1", metadata: { pages: 3, tags: ["x"] } })
  },
  {
    name: "metadata that is an array",
    body: json({ artifactId: "a-1", metadata: [1] }),
    expect: invalid("metadata must be a JSON object")
  },
  {
    name: "metadata of exactly 64 KiB",
    body: json({ artifactId: "a-1", metadata: metadataOf(65_536) }),
    expect: valid({ artifactId: "a-1", metadata: metadataOf(65_536) })
  },
  {
    name: "metadata over 64 KiB",
    body: json({ artifactId: "a-1", metadata: metadataOf(65_537) }),
    expect: invalid("metadata is 65537 bytes, over its limit of 65536 (64 KiB)")
  },
  // The body as a whole.
  { name: "not JSON", body: "<html>ok</html>", expect: invalid("the response is not valid JSON") },
  { name: "empty body", body: "", expect: invalid("the response is not valid JSON") },
  { name: "a JSON array", body: json([{ artifactId: "a-1" }]), expect: invalid("the response must be a JSON object") },
  { name: "JSON null", body: "null", expect: invalid("the response must be a JSON object") },
  {
    name: "a U+0000 anywhere",
    body: json({ artifactId: "a-1", metadata: { note: "a\u0000b" } }),
    expect: invalid("the response holds a U+0000 character")
  },
  {
    name: "unknown keys are ignored",
    body: json({ artifactId: "a-1", status: "stored" }),
    expect: valid({ artifactId: "a-1" })
  },
  {
    name: "a response over 256 KiB (bytes)",
    body: json({ artifactId: "a-1", padding: "é".repeat(ResponseLimits.responseBytes / 2) }),
    expect: invalid(
      `the response is ${
        json({ artifactId: "a-1", padding: "é".repeat(ResponseLimits.responseBytes / 2) }).length +
        ResponseLimits.responseBytes / 2
      } bytes, over the limit of 262144 bytes (256 KiB)`
    )
  },
  {
    name: "a response of exactly 256 KiB",
    body: json({
      artifactId: "a-1",
      padding: "p".repeat(ResponseLimits.responseBytes - json({ artifactId: "a-1", padding: "" }).length)
    }),
    expect: valid({ artifactId: "a-1" })
  }
]

describe("result handler response contract", () => {
  it.each(rows)("$name", (row) => {
    const parsed = parse(row.body, row.purpose ?? "export")
    if ("answer" in row.expect) assert.deepStrictEqual(parsed, { _tag: "Valid", answer: row.expect.answer })
    else assert.deepStrictEqual(parsed, { _tag: "Invalid", message: row.expect.invalid })
  })
})
