/**
 * The result handler response contract (spec 4.5, 8): what a handler's 2xx
 * body must be, and how it is normalized into the answer the service keeps.
 *
 * - The body is at most 256 KiB (raw UTF-8 bytes) and is a JSON object.
 * - `artifactId` and `url` are durable locators; at least one is required
 *   (oversized tool-result recovery requires `artifactId`). `ref` or `block`
 *   alone is not an answer.
 * - `ref` is `{ kind?, id?, url?, block? }`. A top-level `block` string, and
 *   the transitional `suggested_block_refs: { drive: string }`, become
 *   `ref.block` when `ref.block` is not given (precedence: ref.block, then
 *   block, then suggested_block_refs.drive).
 * - `metadata` is a JSON object of at most 64 KiB (its JSON text).
 * - Every string is non-empty, within its bound (ResponseLimits) and holds
 *   no U+0000; URLs are absolute http(s). A null counts as absent. Other keys
 *   are ignored.
 */
import { Data, Option, Schema } from "effect"
import type { HandlerAnswer, HandlerRef } from "../../domain/ResultHandler.ts"
import { hasNul } from "../store/NulFree.ts"

/** Bounds of a handler response, in UTF-8 bytes. */
export const ResponseLimits = {
  responseBytes: 256 * 1024,
  metadataBytes: 64 * 1024,
  artifactIdBytes: 1024,
  urlBytes: 2048,
  refKindBytes: 64,
  refIdBytes: 1024,
  blockBytes: 16 * 1024
} as const

/** Why a dispatch needs the answer: an oversized tool result's archive needs its artifactId. */
export type Purpose = "overflow" | "export"

export type Parsed = Data.TaggedEnum<{
  Valid: { readonly answer: HandlerAnswer }
  Invalid: { readonly message: string }
}>
export const Parsed = Data.taggedEnum<Parsed>()

const decodeJson = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Unknown))
const encoder = new TextEncoder()
const bytesOf = (text: string) => encoder.encode(text).byteLength

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** An invalid field, returned (never thrown) by the field readers below. */
class Problem {
  readonly message: string
  constructor(message: string) {
    this.message = message
  }
}

const isHttpUrl = (text: string) => URL.canParse(text) && ["http:", "https:"].includes(new URL(text).protocol)

/** An optional string field: absent (undefined or null), or a non-empty string within `maxBytes`. */
const text = (value: unknown, field: string, maxBytes: number, url = false): string | undefined | Problem => {
  if (value === undefined || value === null) return undefined
  if (typeof value !== "string" || value.length === 0) return new Problem(`${field} must be a non-empty string`)
  if (bytesOf(value) > maxBytes) return new Problem(`${field} is over its limit of ${maxBytes} bytes`)
  if (url && !isHttpUrl(value)) return new Problem(`${field} must be an absolute http or https URL`)
  return value
}

/** The first problem among `values`, if any. */
const problemIn = (values: ReadonlyArray<unknown>): Problem | undefined =>
  values.find((v): v is Problem => v instanceof Problem)

const refOf = (body: Record<string, unknown>): HandlerRef | undefined | Problem => {
  const raw = body["ref"] ?? undefined
  if (raw !== undefined && !isObject(raw)) return new Problem("ref must be an object { kind?, id?, url?, block? }")
  const source = raw ?? {}
  const suggested = body["suggested_block_refs"] ?? undefined
  if (suggested !== undefined && !(isObject(suggested) && typeof suggested["drive"] === "string")) {
    return new Problem("suggested_block_refs must be { drive: string }")
  }
  const kind = text(source["kind"], "ref.kind", ResponseLimits.refKindBytes)
  const id = text(source["id"], "ref.id", ResponseLimits.refIdBytes)
  const url = text(source["url"], "ref.url", ResponseLimits.urlBytes, true)
  const blocks = [
    text(source["block"], "ref.block", ResponseLimits.blockBytes),
    text(body["block"], "block", ResponseLimits.blockBytes),
    text(suggested?.["drive"], "suggested_block_refs.drive", ResponseLimits.blockBytes)
  ]
  const problem = problemIn([kind, id, url, ...blocks])
  if (problem !== undefined) return problem
  const block = blocks.find((b) => typeof b === "string")
  const ref: HandlerRef = {
    ...(typeof kind === "string" ? { kind } : {}),
    ...(typeof id === "string" ? { id } : {}),
    ...(typeof url === "string" ? { url } : {}),
    ...(typeof block === "string" ? { block } : {})
  }
  return Object.keys(ref).length === 0 ? undefined : ref
}

const metadataOf = (value: unknown): Record<string, unknown> | undefined | Problem => {
  if (value === undefined || value === null) return undefined
  if (!isObject(value)) return new Problem("metadata must be a JSON object")
  const bytes = bytesOf(JSON.stringify(value))
  return bytes > ResponseLimits.metadataBytes
    ? new Problem(`metadata is ${bytes} bytes, over its limit of ${ResponseLimits.metadataBytes} (64 KiB)`)
    : value
}

/** The message for a body over 256 KiB (also when the delivery stopped reading it there). */
export const tooLarge = (bytes?: number): string =>
  `the response is${
    bytes === undefined ? "" : ` ${bytes} bytes,`
  } over the limit of ${ResponseLimits.responseBytes} bytes (256 KiB)`

/** What the answer lacks for `purpose`, if anything (also checked on a replayed answer). */
export const missingFor = (answer: HandlerAnswer, purpose: Purpose): string | undefined =>
  answer.artifactId === undefined && answer.url === undefined
    ? answer.ref === undefined
      ? "the response has neither artifactId nor url"
      : "the response has ref or block but neither artifactId nor url (a durable locator is required)"
    : purpose === "overflow" && answer.artifactId === undefined
    ? "the response has no artifactId, which oversized tool-result recovery requires"
    : undefined

/** Validates and normalizes a handler's 2xx body. */
export const parse = (body: string, purpose: Purpose): Parsed => {
  const invalid = (message: string) => Parsed.Invalid({ message })
  const bytes = bytesOf(body)
  if (bytes > ResponseLimits.responseBytes) return invalid(tooLarge(bytes))
  const json = decodeJson(body)
  if (Option.isNone(json)) return invalid("the response is not valid JSON")
  const value = json.value
  if (!isObject(value)) return invalid("the response must be a JSON object")
  if (hasNul(value)) return invalid("the response holds a U+0000 character")
  const artifactId = text(value["artifactId"], "artifactId", ResponseLimits.artifactIdBytes)
  const url = text(value["url"], "url", ResponseLimits.urlBytes, true)
  const ref = refOf(value)
  const metadata = metadataOf(value["metadata"])
  const problem = problemIn([artifactId, url, ref, metadata])
  if (problem !== undefined) return invalid(problem.message)
  const normalized: HandlerAnswer = {
    ...(typeof artifactId === "string" ? { artifactId } : {}),
    ...(typeof url === "string" ? { url } : {}),
    ...(ref === undefined || ref instanceof Problem ? {} : { ref }),
    ...(metadata === undefined || metadata instanceof Problem ? {} : { metadata })
  }
  const missing = missingFor(normalized, purpose)
  return missing === undefined ? Parsed.Valid({ answer: normalized }) : invalid(missing)
}
