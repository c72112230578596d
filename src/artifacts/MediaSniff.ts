/**
 * The media type of bytes whose sender did not say (no Content-Type, or
 * `application/octet-stream`), from their first bytes: PNG, JPEG, GIF, WebP,
 * PDF by their signatures; then JSON (UTF-8 that parses as JSON) and plain
 * text (UTF-8 without control characters other than tab, newlines, form feed
 * and escape); anything else stays `application/octet-stream`.
 *
 * `sniffer` reads the bytes as they arrive (an upload is never held whole):
 * the signatures from the first bytes, UTF-8 and control characters over
 * every byte; a text is kept to be parsed as JSON only up to
 * `jsonSniffBytes`, so a larger JSON file whose sender did not say is
 * `text/plain`.
 */
import { Option, Schema } from "effect"

const startsWith = (data: Uint8Array, signature: ReadonlyArray<number>, at = 0): boolean =>
  data.length >= at + signature.length && signature.every((byte, i) => data[at + i] === byte)

const ascii = (text: string): ReadonlyArray<number> => [...text].map((c) => c.charCodeAt(0))

const signatures: ReadonlyArray<readonly [mediaType: string, matches: (data: Uint8Array) => boolean]> = [
  ["image/png", (d) => startsWith(d, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])],
  ["image/jpeg", (d) => startsWith(d, [0xff, 0xd8, 0xff])],
  ["image/gif", (d) => startsWith(d, ascii("GIF87a")) || startsWith(d, ascii("GIF89a"))],
  ["image/webp", (d) => startsWith(d, ascii("RIFF")) && startsWith(d, ascii("WEBP"), 8)],
  ["application/pdf", (d) => startsWith(d, ascii("%PDF-"))]
]

/** Text up to this size is parsed to tell JSON from plain text. */
export const jsonSniffBytes = 1024 * 1024

/** Enough of the head for every signature. */
const headBytes = 16

// C0 controls other than \t \n \f \r and ESC, and DEL: not in text a person wrote.
const binaryControl = /[\u0000-\u0008\u000b\u000e-\u001a\u001c-\u001f\u007f]/

const isJson = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Unknown))

export const octetStream = "application/octet-stream"

export interface Sniffer {
  /** Reads the next bytes. */
  readonly update: (bytes: Uint8Array) => void
  /** The media type of every byte read. */
  readonly result: () => string
}

/** A media type sniffed from bytes read in pieces. */
export const sniffer = (): Sniffer => {
  const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false })
  let head = new Uint8Array(0)
  let text: Array<string> | undefined = []
  let seen = 0
  let binary = false
  const decode = (bytes?: Uint8Array) => {
    if (binary) return
    let decoded: string
    try {
      decoded = bytes === undefined ? utf8.decode() : utf8.decode(bytes, { stream: true })
    } catch {
      binary = true
      return
    }
    if (binaryControl.test(decoded)) {
      binary = true
      return
    }
    if (seen > jsonSniffBytes) text = undefined
    else text?.push(decoded)
  }
  return {
    update: (bytes) => {
      if (head.byteLength < headBytes) {
        head = Uint8Array.from([...head, ...bytes.subarray(0, headBytes - head.byteLength)])
      }
      seen += bytes.byteLength
      decode(bytes)
    },
    result: () => {
      for (const [mediaType, matches] of signatures) if (matches(head)) return mediaType
      decode()
      if (binary) return octetStream
      const trimmed = text === undefined ? "" : text.join("").trim()
      if ((trimmed.startsWith("{") || trimmed.startsWith("[")) && Option.isSome(isJson(trimmed))) {
        return "application/json"
      }
      return "text/plain"
    }
  }
}

export const sniff = (data: Uint8Array): string => {
  const bytes = sniffer()
  bytes.update(data)
  return bytes.result()
}
