/**
 * Sniffing the media type of an upload as its bytes arrive in pieces: the
 * same answer as for the whole bytes wherever the pieces split them (a
 * signature, a UTF-8 character), a control character anywhere makes them
 * binary, and JSON is told from text only up to `jsonSniffBytes`.
 */
import { assert, describe, it } from "@effect/vitest"
import { jsonSniffBytes, sniff, sniffer } from "../../../src/artifacts/MediaSniff.ts"

const text = (s: string) => new TextEncoder().encode(s)

/** The bytes cut at `cuts`. */
const split = (data: Uint8Array, cuts: ReadonlyArray<number>) =>
  [0, ...cuts].map((at, i) => data.subarray(at, cuts[i] ?? data.byteLength))

const inPieces = (pieces: ReadonlyArray<Uint8Array>) => {
  const s = sniffer()
  for (const piece of pieces) s.update(piece)
  return s.result()
}

const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13])
const bigJson = text(`[${"1,".repeat(jsonSniffBytes / 2)}1]`)

describe("sniffing in pieces", () => {
  it.each(
    [
      ["a PNG signature cut in three", png, [2, 5], "image/png"],
      [
        "WebP: RIFF, then WEBP at byte 8 of the next piece",
        text("RIFF\u0024\u0000\u0000\u0000WEBPVP8 "),
        [6],
        "image/webp"
      ],
      ["a two-byte UTF-8 character cut in half", text("Héllo, wörld\n"), [2], "text/plain"],
      ["JSON cut anywhere", text(" { \"a\": [1, 2, {\"b\": null}] }\n"), [3, 9, 20], "application/json"],
      ["a control character in the last piece", text("plain text\u0001"), [5], "application/octet-stream"],
      ["invalid UTF-8 in the last piece", Uint8Array.from([0x61, 0x62, 0xc3, 0x28]), [2], "application/octet-stream"],
      ["JSON over jsonSniffBytes is text", bigJson, [1000, 500_000], "text/plain"]
    ] as const
  )("%s", (_name, data, cuts, expected) => {
    assert.strictEqual(inPieces(split(data, cuts)), expected)
    if (data !== bigJson) assert.strictEqual(sniff(data), expected)
  })
})
