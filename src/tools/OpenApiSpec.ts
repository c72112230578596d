/**
 * OpenAPI 3.x / Swagger 2.0 documents for HTTP connections (spec 4.7):
 * loading (inline JSON or a URL through the guarded client; YAML refused),
 * parsing and resolving the document's own `$ref`s in linear time
 * (OpenApiRefs.ts: a document can never make the service read files or other
 * URLs, and `$ref` fan-out is never expanded here), mapping operations to tools
 * (rules 1-2), and base URL resolution (rule 6).
 */
import { Data, Duration, Effect, Schema } from "effect"
import type { OpenAPI, OpenAPIV2, OpenAPIV3 } from "openapi-types"
import { errorText } from "../ErrorText.ts"
import type { GuardedFetch } from "../outbound/Outbound.ts"
import { dereference } from "./OpenApiRefs.ts"

export const MaxSpecBytes = 5 * 1024 * 1024

export class SpecFailure extends Data.TaggedError("SpecFailure")<{
  readonly errorCode: "spec_unreachable" | "spec_invalid" | "base_url_missing"
  readonly message: string
  /** What failed underneath, kept for the logs. */
  readonly cause?: unknown
}> {}

const decodeJson = Schema.decodeUnknownEffect(Schema.fromJsonString(Schema.Record(Schema.String, Schema.Unknown)))

const looksLikeYaml = (text: string): boolean => /^\s*(openapi|swagger)\s*:/m.test(text)

/** How a `spec` field is given. */
export type SpecSource = Data.TaggedEnum<{
  Inline: { readonly text: string }
  Url: { readonly url: string }
  Invalid: { readonly message: string }
}>
export const SpecSource = Data.taggedEnum<SpecSource>()

export const classifySpec = (spec: string): SpecSource => {
  const text = spec.trim()
  if (text.startsWith("{")) return SpecSource.Inline({ text })
  if (looksLikeYaml(text)) {
    return SpecSource.Invalid({
      message: "YAML documents are not supported; send the OpenAPI document as JSON (inline or by URL)."
    })
  }
  // Anything written as scheme://... is a URL, to be judged (and refused) by the URL policy.
  if (URL.canParse(text) || /^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return SpecSource.Url({ url: text })
  return SpecSource.Invalid({ message: "spec must be a URL to a JSON document, or the JSON document itself." })
}

/** The versions this service reads. */
export const checkVersion = (doc: Readonly<Record<string, unknown>>): string | undefined => {
  const openapi = doc["openapi"]
  if (typeof openapi === "string" && /^3\.\d+(\.\d+)?/.test(openapi)) return undefined
  if (doc["swagger"] === "2.0") return undefined
  return "the document is neither OpenAPI 3.x (an `openapi: 3.x` field) nor Swagger 2.0 (`swagger: \"2.0\"`)"
}

const parseText = (text: string) =>
  decodeJson(text).pipe(
    Effect.mapError(() =>
      new SpecFailure({
        errorCode: "spec_invalid",
        message: looksLikeYaml(text)
          ? "YAML documents are not supported; serve the document as JSON"
          : "the document is not valid JSON"
      })
    )
  )

export interface LoadedSpec {
  readonly document: OpenAPI.Document
  /** Where it was loaded from, for relative `servers[]` URLs. */
  readonly url: URL | undefined
}

/** Parses a JSON document of a supported version and resolves its local references (shared, not expanded). */
export const parse = (text: string, url: URL | undefined): Effect.Effect<LoadedSpec, SpecFailure> =>
  Effect.gen(function*() {
    const raw = yield* parseText(text)
    const wrongVersion = checkVersion(raw)
    if (wrongVersion !== undefined) return yield* new SpecFailure({ errorCode: "spec_invalid", message: wrongVersion })
    // A JSON document of a supported version, read as one: the fields operations() reads are checked as it reads them.
    return { document: dereference(raw) as OpenAPI.Document, url }
  })

/** Loads (inline or by URL) and parses the document. */
export const load = (spec: string, fetch: GuardedFetch, timeoutMs: number): Effect.Effect<LoadedSpec, SpecFailure> =>
  SpecSource.$match(classifySpec(spec), {
    Invalid: ({ message }) => Effect.fail(new SpecFailure({ errorCode: "spec_invalid", message })),
    Inline: ({ text }) => parse(text, undefined),
    Url: ({ url }) => Effect.flatMap(download(url, fetch, timeoutMs), (text) => parse(text, new URL(url)))
  })

const download = (url: string, fetch: GuardedFetch, timeoutMs: number) =>
  Effect.tryPromise({
    try: async (signal) => {
      const response = await fetch(url, { headers: { accept: "application/json" }, signal })
      if (!response.ok) throw new Error(`HTTP ${response.status}`)
      const declared = Number(response.headers.get("content-length") ?? "0")
      if (declared > MaxSpecBytes) throw new Error(`the document is larger than ${MaxSpecBytes} bytes`)
      const body = await response.arrayBuffer()
      if (body.byteLength > MaxSpecBytes) throw new Error(`the document is larger than ${MaxSpecBytes} bytes`)
      return new TextDecoder().decode(body)
    },
    catch: (cause) =>
      new SpecFailure({
        errorCode: "spec_unreachable",
        message: `could not load ${url}: ${errorText(cause)}`,
        cause
      })
  }).pipe(
    Effect.timeoutOrElse({
      duration: Duration.millis(timeoutMs),
      orElse: () => Effect.fail(new SpecFailure({ errorCode: "spec_unreachable", message: `loading ${url} timed out` }))
    })
  )

// ---- operations (rules 1-2) --------------------------------------------------

const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const
export type Method = (typeof methods)[number]

export interface Operation {
  /** The tool's operation name: sanitized operationId, or `{method}_{path}`, suffixed on collision. */
  readonly name: string
  readonly operationId: string | undefined
  readonly method: Method
  readonly path: string
  readonly summary: string | undefined
  readonly description: string | undefined
  readonly operation: OpenAPIV3.OperationObject | OpenAPIV2.OperationObject
  readonly pathItem: OpenAPIV3.PathItemObject | OpenAPIV2.PathItemObject
}

/** Letters, digits, `_` and `-` only; runs of anything else become one `_`. */
export const sanitize = (raw: string): string =>
  raw.replace(/[^A-Za-z0-9_-]+/g, "_").replace(/_{2,}/g, "_").replace(/^_+|_+$/g, "")

export const operations = (document: OpenAPI.Document): ReadonlyArray<Operation> => {
  const out: Array<Operation> = []
  const used = new Set<string>()
  const isRecord = (u: unknown): u is object => typeof u === "object" && u !== null && !Array.isArray(u)
  for (const [path, item] of Object.entries(isRecord(document.paths) ? document.paths : {})) {
    // Only what a document of its version can hold: a path item or an operation that is not an object is no operation.
    if (!isRecord(item)) continue
    const pathItem = item as OpenAPIV3.PathItemObject
    for (const method of methods) {
      const operation = pathItem[method]
      if (operation === undefined || !isRecord(operation)) continue
      const fromId = typeof operation.operationId !== "string" ? "" : sanitize(operation.operationId)
      const base = fromId !== "" ? fromId : sanitize(`${method}_${path}`) || method
      let name = base
      for (let n = 2; used.has(name); n++) name = `${base}_${n}`
      used.add(name)
      out.push({
        name,
        operationId: typeof operation.operationId === "string" ? operation.operationId : undefined,
        method,
        path,
        summary: typeof operation.summary === "string" ? operation.summary : undefined,
        description: typeof operation.description === "string" ? operation.description : undefined,
        operation,
        pathItem
      })
    }
  }
  return out
}

/** `allowedOperations` names either the tool's operation name or the document's operationId. */
export const allowed = (ops: ReadonlyArray<Operation>, allowedOperations: ReadonlyArray<string> | null) => {
  if (allowedOperations === null) return ops
  const names = new Set(allowedOperations)
  return ops.filter((op) => names.has(op.name) || (op.operationId !== undefined && names.has(op.operationId)))
}

// ---- base URL (rule 6) -------------------------------------------------------

const substituteVariables = (server: OpenAPIV3.ServerObject): string =>
  String(server.url).replace(/\{([^}]+)\}/g, (_, name: string) => server.variables?.[name]?.default?.toString() ?? "")

/**
 * The first usable base URL: the explicit one, else the document's first
 * `servers[]` entry that passes the URL policy (3.x; relative entries resolve
 * against the document's URL), else `schemes`/`host`/`basePath` (2.0).
 */
export const resolveBaseUrl = (
  loaded: LoadedSpec,
  explicit: string | null,
  permits: (url: string) => URL | undefined
): string | undefined => {
  const usable = (candidate: string): string | undefined => {
    const url = permits(candidate)
    return url === undefined ? undefined : url.toString().replace(/\/$/, "")
  }
  if (explicit !== null) return usable(explicit)
  const doc = loaded.document
  if ("openapi" in doc) {
    for (const server of Array.isArray(doc.servers) ? doc.servers : []) {
      if (typeof server !== "object" || server === null) continue
      const raw = substituteVariables(server)
      const base = loaded.url?.toString()
      const absolute = URL.canParse(raw)
        ? raw
        : base !== undefined && URL.canParse(raw, base)
        ? new URL(raw, base).toString()
        : undefined
      const result = absolute === undefined ? undefined : usable(absolute)
      if (result !== undefined) return result
    }
    return undefined
  }
  const v2 = doc as OpenAPIV2.Document
  if (v2.host === undefined) return undefined
  const schemes = v2.schemes ?? ["https"]
  for (const scheme of ["https", "http"].filter((s) => schemes.includes(s))) {
    const result = usable(`${scheme}://${v2.host}${v2.basePath ?? ""}`)
    if (result !== undefined) return result
  }
  return undefined
}
