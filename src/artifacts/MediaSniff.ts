/**
 * The media type of bytes whose sender did not say (no Content-Type, or
 * `application/octet-stream`), from their first bytes: PNG, JPEG, GIF, WebP,
 * PDF by their signatures; then JSON (UTF-8 that parses as JSON) and plain
 * text (UTF-8 without control characters other than tab, newlines, form feed
 * and escape); anything else stays `application/octet-stream`.
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

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false })

/** The bytes as text, when they are UTF-8. */
const asUtf8 = (data: Uint8Array): string | undefined => {
  try {
    return utf8.decode(data)
  } catch {
    return undefined
  }
}

// C0 controls other than \t \n \f \r and ESC, and DEL: not in text a person wrote.
const binaryControl = /[\u0000-\u0008\u000b\u000e-\u001a\u001c-\u001f\u007f]/

const isJson = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Unknown))

export const octetStream = "application/octet-stream"

export const sniff = (data: Uint8Array): string => {
  for (const [mediaType, matches] of signatures) if (matches(data)) return mediaType
  const text = asUtf8(data)
  if (text === undefined || binaryControl.test(text)) return octetStream
  const trimmed = text.trim()
  if ((trimmed.startsWith("{") || trimmed.startsWith("[")) && Option.isSome(isJson(trimmed))) return "application/json"
  return "text/plain"
}
