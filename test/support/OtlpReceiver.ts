/**
 * A local OTLP/HTTP receiver, what a collector is to the service: a real
 * node:http listener accepting `POST /v1/traces` and `POST /v1/metrics`, in
 * OTLP/JSON or OTLP/protobuf. Spans from either are read into one shape
 * (protobuf through the small wire decoder in OtlpProtobuf.ts); metrics are
 * read from OTLP/JSON.
 */
import { Effect, Schema } from "effect"
import { createServer, type IncomingMessage } from "node:http"
import { bodyBytes } from "./HttpPeer.ts"
import { protobufSpans } from "./OtlpProtobuf.ts"

export type AttributeValue = string | number | boolean

export interface ReceivedSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string | undefined
  readonly name: string
  /** 1 internal, 2 server, 3 client. */
  readonly kind: number
  readonly attributes: Readonly<Record<string, AttributeValue>>
  /** The attributes of the resource that sent it. */
  readonly resource: Readonly<Record<string, AttributeValue>>
  readonly links: ReadonlyArray<{ readonly traceId: string; readonly spanId: string }>
}

export interface ReceivedPoint {
  readonly attributes: Readonly<Record<string, AttributeValue>>
  /** Sums and gauges. */
  readonly value: number | undefined
  /** Histograms. */
  readonly count: number | undefined
}

export interface ReceivedMetric {
  readonly name: string
  readonly points: ReadonlyArray<ReceivedPoint>
}

export interface Post {
  readonly path: string
  readonly contentType: string
  readonly headers: IncomingMessage["headers"]
  readonly body: Buffer
}

const AnyValue = Schema.Struct({
  stringValue: Schema.optional(Schema.NullOr(Schema.String)),
  boolValue: Schema.optional(Schema.NullOr(Schema.Boolean)),
  intValue: Schema.optional(Schema.NullOr(Schema.Union([Schema.Number, Schema.String]))),
  doubleValue: Schema.optional(Schema.NullOr(Schema.Number))
})
const Attributes = Schema.Array(Schema.Struct({ key: Schema.String, value: AnyValue }))
type Attributes = typeof Attributes.Type

const JsonTraces = Schema.fromJsonString(Schema.Struct({
  resourceSpans: Schema.Array(Schema.Struct({
    resource: Schema.Struct({ attributes: Attributes }),
    scopeSpans: Schema.Array(Schema.Struct({
      spans: Schema.Array(Schema.Struct({
        traceId: Schema.String,
        spanId: Schema.String,
        parentSpanId: Schema.optional(Schema.String),
        name: Schema.String,
        kind: Schema.Number,
        attributes: Attributes,
        links: Schema.Array(Schema.Struct({ traceId: Schema.String, spanId: Schema.String }))
      }))
    }))
  }))
}))

const Point = Schema.Struct({
  attributes: Attributes,
  asInt: Schema.optional(Schema.Union([Schema.Number, Schema.String])),
  asDouble: Schema.optional(Schema.Number),
  count: Schema.optional(Schema.Union([Schema.Number, Schema.String]))
})
const Points = Schema.optional(Schema.Struct({ dataPoints: Schema.Array(Point) }))
const JsonMetrics = Schema.fromJsonString(Schema.Struct({
  resourceMetrics: Schema.Array(Schema.Struct({
    scopeMetrics: Schema.Array(Schema.Struct({
      metrics: Schema.Array(Schema.Struct({ name: Schema.String, sum: Points, gauge: Points, histogram: Points }))
    }))
  }))
}))

const valueOf = (v: typeof AnyValue.Type): AttributeValue =>
  v.stringValue ?? v.boolValue ?? (v.intValue === undefined || v.intValue === null ? undefined : Number(v.intValue)) ??
    v.doubleValue ?? ""

export const attributeRecord = (attributes: Attributes): Record<string, AttributeValue> =>
  Object.fromEntries(attributes.map((a) => [a.key, valueOf(a.value)]))

const jsonSpans = (body: Buffer): Array<ReceivedSpan> =>
  Schema.decodeUnknownSync(JsonTraces)(body.toString("utf8")).resourceSpans.flatMap((rs) =>
    rs.scopeSpans.flatMap((ss) =>
      ss.spans.map((s) => ({
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId,
        name: s.name,
        kind: s.kind,
        attributes: attributeRecord(s.attributes),
        resource: attributeRecord(rs.resource.attributes),
        links: s.links
      }))
    )
  )

const jsonMetrics = (body: Buffer): Array<ReceivedMetric> =>
  Schema.decodeUnknownSync(JsonMetrics)(body.toString("utf8")).resourceMetrics.flatMap((rm) =>
    rm.scopeMetrics.flatMap((sm) =>
      sm.metrics.map((m) => ({
        name: m.name,
        points: (m.sum ?? m.gauge ?? m.histogram)?.dataPoints.map((p) => ({
          attributes: attributeRecord(p.attributes),
          value: p.asInt !== undefined ? Number(p.asInt) : p.asDouble,
          count: p.count === undefined ? undefined : Number(p.count)
        })) ?? []
      }))
    )
  )

/** The receiver on an ephemeral port, closed with the scope. */
export const start = Effect.acquireRelease(
  Effect.promise(async () => {
    const posts: Array<Post> = []
    const server = createServer(async (req, res) => {
      const body = await bodyBytes(req)
      const known = req.method === "POST" && (req.url === "/v1/traces" || req.url === "/v1/metrics")
      if (known) {
        posts.push({ path: req.url ?? "", contentType: req.headers["content-type"] ?? "", headers: req.headers, body })
      }
      res.writeHead(known ? 200 : 404, { "content-type": "application/json" })
      res.end("{}")
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    const spans = (): Array<ReceivedSpan> =>
      posts
        .filter((p) => p.path === "/v1/traces")
        .flatMap((
          p
        ) => (p.contentType.startsWith("application/x-protobuf") ? protobufSpans(p.body) : jsonSpans(p.body)))
    const metrics = (): Array<ReceivedMetric> =>
      posts.filter((p) => p.path === "/v1/metrics" && p.contentType.startsWith("application/json")).flatMap((p) =>
        jsonMetrics(p.body)
      )
    return { url: `http://127.0.0.1:${port}`, posts, spans, metrics, server }
  }),
  ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
)

export type OtlpReceiver = Effect.Success<typeof start>
