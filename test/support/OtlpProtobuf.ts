/**
 * Just enough of the protobuf wire format to read the spans of an OTLP
 * `ExportTraceServiceRequest` (opentelemetry/proto/trace/v1/trace.proto):
 * resource attributes, and each span's ids, name, kind, attributes and links.
 * Field numbers are the proto's.
 */
import type { AttributeValue, ReceivedSpan } from "./OtlpReceiver.ts"

type Field = { readonly wire: 0; readonly value: bigint } | { readonly wire: 1 | 5 | 2; readonly bytes: Uint8Array }

/** Every field of one message, by field number, in order. */
const fields = (buf: Uint8Array): Map<number, Array<Field>> => {
  const out = new Map<number, Array<Field>>()
  let at = 0
  const varint = (): bigint => {
    let result = 0n
    let shift = 0n
    while (true) {
      const byte = buf[at++]
      result |= BigInt(byte & 0x7f) << shift
      if ((byte & 0x80) === 0) return result
      shift += 7n
    }
  }
  while (at < buf.length) {
    const key = Number(varint())
    const number = key >>> 3
    const wire = key & 7
    let field: Field
    if (wire === 0) field = { wire: 0, value: varint() }
    else if (wire === 1 || wire === 5) {
      const size = wire === 1 ? 8 : 4
      field = { wire, bytes: buf.subarray(at, at + size) }
      at += size
    } else if (wire === 2) {
      const length = Number(varint())
      field = { wire: 2, bytes: buf.subarray(at, at + length) }
      at += length
    } else throw new Error(`unsupported wire type ${wire}`)
    out.set(number, [...(out.get(number) ?? []), field])
  }
  return out
}

const all = (message: Map<number, Array<Field>>, n: number): Array<Uint8Array> =>
  (message.get(n) ?? []).flatMap((f) => (f.wire === 0 ? [] : [f.bytes]))
const bytes = (message: Map<number, Array<Field>>, n: number): Uint8Array | undefined => all(message, n)[0]
const text = (message: Map<number, Array<Field>>, n: number): string =>
  Buffer.from(bytes(message, n) ?? []).toString("utf8")
const hex = (message: Map<number, Array<Field>>, n: number): string | undefined => {
  const b = bytes(message, n)
  return b === undefined || b.length === 0 ? undefined : Buffer.from(b).toString("hex")
}
const varintOf = (message: Map<number, Array<Field>>, n: number): bigint | undefined => {
  const f = message.get(n)?.[0]
  return f !== undefined && f.wire === 0 ? f.value : undefined
}

/** AnyValue: string 1, bool 2, int 3, double 4. */
const anyValue = (message: Map<number, Array<Field>>): AttributeValue => {
  if (message.has(1)) return text(message, 1)
  if (message.has(2)) return varintOf(message, 2) === 1n
  if (message.has(3)) return Number(BigInt.asIntN(64, varintOf(message, 3) ?? 0n))
  const double = bytes(message, 4)
  return double === undefined ? "" : Buffer.from(double).readDoubleLE(0)
}

/** KeyValue: key 1, value 2. */
const attributes = (encoded: Array<Uint8Array>): Record<string, AttributeValue> =>
  Object.fromEntries(encoded.map((kv) => {
    const m = fields(kv)
    return [text(m, 1), anyValue(fields(bytes(m, 2) ?? new Uint8Array()))]
  }))

/** TracesData: resource_spans 1 > (resource 1 > attributes 1), scope_spans 2 > spans 2. */
export const protobufSpans = (body: Uint8Array): Array<ReceivedSpan> =>
  all(fields(body), 1).flatMap((encodedResourceSpans) => {
    const resourceSpans = fields(encodedResourceSpans)
    const resource = attributes(all(fields(bytes(resourceSpans, 1) ?? new Uint8Array()), 1))
    return all(resourceSpans, 2).flatMap((scopeSpans) =>
      all(fields(scopeSpans), 2).map((encoded): ReceivedSpan => {
        // Span: trace_id 1, span_id 2, parent_span_id 4, name 5, kind 6, attributes 9, links 13.
        const span = fields(encoded)
        return {
          traceId: hex(span, 1) ?? "",
          spanId: hex(span, 2) ?? "",
          parentSpanId: hex(span, 4),
          name: text(span, 5),
          kind: Number(varintOf(span, 6) ?? 0n),
          attributes: attributes(all(span, 9)),
          resource,
          links: all(span, 13).map((link) => {
            const l = fields(link)
            return { traceId: hex(l, 1) ?? "", spanId: hex(l, 2) ?? "" }
          })
        }
      })
    )
  })
