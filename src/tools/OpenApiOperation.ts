/**
 * An OpenAPI operation read as a tool (spec 4.7 rules 2-4): its parameters in
 * both document versions (Swagger 2.0 and OpenAPI 3), the tool's input schema
 * (parameters as top-level properties, the body under `body`), where the
 * credential goes, and the HTTP request rebuilt from a call's input.
 */
import { randomUUID } from "node:crypto"
import type { OpenAPI, OpenAPIV2, OpenAPIV3 } from "openapi-types"
import type * as OpenApiSpec from "./OpenApiSpec.ts"
import { measure, SchemaLimits } from "./SchemaBudget.ts"

interface Param {
  readonly name: string
  readonly in: "path" | "query" | "header" | "cookie"
  readonly required: boolean
  /** With the parameter's description, when it has one. */
  readonly schema: Record<string, unknown>
}

export const asRecord = (
  u: unknown
): Record<
  string,
  unknown
> => (typeof u === "object" && u !== null && !Array.isArray(u) ? (u as Record<string, unknown>) : {})

/** Parameters of the path item and the operation (the operation's win), in both document versions. */
/** How the request body is sent. */
type BodyEncoding = "json" | "form" | "multipart"

const encodingOf = (mediaType: string): BodyEncoding =>
  mediaType.startsWith("application/x-www-form-urlencoded")
    ? "form"
    : mediaType.startsWith("multipart/form-data")
    ? "multipart"
    : "json"

/** A Swagger 2.0 parameter's schema: type, format, items, enum and bounds sit on the parameter itself. */
const inlineSchema = (p: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(p).filter(([k]) => ["type", "format", "items", "enum", "default", "minimum", "maximum"].includes(k))
  )

const describedSchema = (p: Record<string, unknown>): Record<string, unknown> => {
  const schema = p["schema"] !== undefined ? asRecord(p["schema"]) : inlineSchema(p)
  return typeof p["description"] === "string" ? { ...schema, description: p["description"] } : schema
}

/**
 * Parameters of the path item and the operation (the operation's win), in both
 * document versions, and the body: OpenAPI 3 `requestBody` (JSON preferred,
 * else form or multipart), Swagger 2.0 `in: body`, or Swagger 2.0 `formData`
 * parameters gathered into one object (multipart when the operation consumes it).
 */
const parametersOf = (op: OpenApiSpec.Operation): {
  readonly params: ReadonlyArray<Param>
  readonly body: Record<string, unknown> | undefined
  readonly bodyRequired: boolean
  readonly encoding: BodyEncoding
} => {
  const list = (u: unknown): ReadonlyArray<unknown> => (Array.isArray(u) ? u : [])
  const all = [...list(op.pathItem.parameters), ...list(op.operation.parameters)].map(asRecord)
  const byKey = new Map<string, Record<string, unknown>>()
  for (const p of all) byKey.set(`${String(p["in"])}:${String(p["name"])}`, p)
  const params: Array<Param> = []
  let body: Record<string, unknown> | undefined
  let bodyRequired = false
  let encoding: BodyEncoding = "json"
  const formFields: Record<string, unknown> = {}
  const formRequired: Array<string> = []
  for (const p of byKey.values()) {
    const where = p["in"]
    const name = String(p["name"])
    if (where === "body") {
      body = asRecord(p["schema"])
      bodyRequired = p["required"] === true
      continue
    }
    if (where === "formData") {
      formFields[name] = describedSchema(p)
      if (p["required"] === true) formRequired.push(name)
      continue
    }
    if (where !== "path" && where !== "query" && where !== "header" && where !== "cookie") continue
    params.push({ name, in: where, required: where === "path" || p["required"] === true, schema: describedSchema(p) })
  }
  if (Object.keys(formFields).length > 0) {
    body = { type: "object", properties: formFields, ...(formRequired.length > 0 ? { required: formRequired } : {}) }
    bodyRequired = formRequired.length > 0
    const consumes = (op.operation as OpenAPIV2.OperationObject).consumes ?? []
    encoding = consumes.some((c) => c.startsWith("multipart/form-data")) ? "multipart" : "form"
  }
  const requestBody = asRecord((op.operation as OpenAPIV3.OperationObject).requestBody)
  const content = asRecord(requestBody["content"])
  const mediaType = "application/json" in content ? "application/json" : Object.keys(content)[0]
  if (mediaType !== undefined && asRecord(content[mediaType])["schema"] !== undefined) {
    body = asRecord(asRecord(content[mediaType])["schema"])
    bodyRequired = requestBody["required"] === true
    encoding = encodingOf(mediaType)
  }
  return { params, body, bodyRequired, encoding }
}

/** The tool's input schema: parameters as top-level properties, the body under `body`. */
export const inputSchemaOf = (op: OpenApiSpec.Operation): Record<string, unknown> => {
  const { params, body, bodyRequired } = parametersOf(op)
  const properties: Record<string, unknown> = {}
  const required: Array<string> = []
  for (const p of params) {
    properties[p.name] = p.schema
    if (p.required) required.push(p.name)
  }
  if (body !== undefined) {
    properties["body"] = body
    if (bodyRequired) required.push("body")
  }
  return { type: "object", properties, ...(required.length > 0 ? { required } : {}) }
}

export type BoundedSchemas =
  | { readonly _tag: "Within"; readonly schemas: ReadonlyArray<Record<string, unknown>> }
  | { readonly _tag: "Refused"; readonly message: string }

/**
 * The input schemas of the operations a connection exposes, each within SchemaLimits.maxDepth
 * and maxToolSchemaBytes and all within maxConnectionSchemaBytes, measured as the model would
 * read them (`$ref`s expanded); or why not. The walk stops at the first bound passed, so a
 * document whose references fan out costs at most the budget.
 */
export const boundedInputSchemas = (ops: ReadonlyArray<OpenApiSpec.Operation>): BoundedSchemas => {
  const schemas: Array<Record<string, unknown>> = []
  let total = 0
  const { maxConnectionSchemaBytes, maxDepth, maxToolSchemaBytes } = SchemaLimits
  for (const op of ops) {
    const schema = inputSchemaOf(op)
    const measured = measure(schema, { maxDepth, maxBytes: maxToolSchemaBytes })
    if (measured._tag !== "Within") {
      const what = measured._tag === "TooDeep"
        ? `is nested deeper than ${maxDepth} levels`
        : `is larger than ${maxToolSchemaBytes} bytes`
      return {
        _tag: "Refused",
        message:
          `the input schema of operation '${op.name}' ${what} once its $refs are expanded (allowedOperations can leave it out)`
      }
    }
    total += measured.bytes
    if (total > maxConnectionSchemaBytes) {
      return {
        _tag: "Refused",
        message:
          `the input schemas of the exposed operations are larger than ${maxConnectionSchemaBytes} bytes together once their $refs are expanded (allowedOperations can leave some out)`
      }
    }
    schemas.push(schema)
  }
  return { _tag: "Within", schemas }
}

type Placement =
  | { readonly in: "authorization"; readonly scheme: "Bearer" | "Basic" }
  | { readonly in: "header" | "query" | "cookie"; readonly name: string }

/** Where the credential goes, from the operation's effective security requirement (rule 4). */
export const placementOf = (doc: OpenAPI.Document, op: OpenApiSpec.Operation): Placement => {
  const declared: unknown = op.operation.security ?? doc.security
  const requirements = Array.isArray(declared) ? declared.map(asRecord) : []
  const schemes = asRecord(
    "components" in doc ? asRecord(doc.components)["securitySchemes"] : (doc as OpenAPIV2.Document).securityDefinitions
  )
  for (const requirement of requirements) {
    for (const name of Object.keys(requirement)) {
      const scheme = asRecord(schemes[name])
      const type = scheme["type"]
      if (type === "apiKey") {
        const where = scheme["in"]
        if (where === "header" || where === "query" || where === "cookie") {
          return { in: where, name: String(scheme["name"]) }
        }
      }
      if (type === "basic" || (type === "http" && String(scheme["scheme"]).toLowerCase() === "basic")) {
        return { in: "authorization", scheme: "Basic" }
      }
      if (type === "http" || type === "oauth2" || type === "openIdConnect") {
        return { in: "authorization", scheme: "Bearer" }
      }
    }
  }
  return { in: "authorization", scheme: "Bearer" }
}

/** A header that carries the credential beyond Authorization and Cookie: dropped on a cross-origin redirect. */
export const credentialHeaderOf = (placement: Placement): ReadonlyArray<string> =>
  placement.in === "header" ? [placement.name.toLowerCase()] : []

const scalar = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v))

/** Rebuilds the operation's request from the tool input. */
export const buildRequest = (
  baseUrl: string,
  op: OpenApiSpec.Operation,
  input: Record<string, unknown>
): { readonly url: URL; readonly headers: Record<string, string>; readonly body: string | undefined } => {
  const { params, encoding } = parametersOf(op)
  const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(scalar(input[name] ?? "")))
  const url = new URL(baseUrl.replace(/\/+$/, "") + path)
  const headers: Record<string, string> = { accept: "application/json" }
  const cookies: Array<string> = []
  for (const p of params) {
    const value = input[p.name]
    if (value === undefined || p.in === "path") continue
    if (p.in === "query") {
      for (const v of Array.isArray(value) ? value : [value]) url.searchParams.append(p.name, scalar(v))
    } else if (p.in === "header") headers[p.name.toLowerCase()] = scalar(value)
    else cookies.push(`${p.name}=${encodeURIComponent(scalar(value))}`)
  }
  if (cookies.length > 0) headers["cookie"] = cookies.join("; ")
  const value = input["body"]
  if (value === undefined) return { url, headers, body: undefined }
  if (encoding === "json") {
    return { url, headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(value) }
  }
  // Form fields: arrays repeat the field, other values are sent as text.
  const fields = Object.entries(asRecord(value)).flatMap(([k, v]) =>
    (Array.isArray(v) ? v : [v]).map((item): [string, string] => [k, scalar(item)])
  )
  if (encoding === "form") {
    return {
      url,
      headers: { ...headers, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString()
    }
  }
  const boundary = `svc-${randomUUID()}`
  const quoted = (name: string) => name.replace(/["\r\n]/g, (c) => encodeURIComponent(c))
  const parts = fields.map(([k, v]) =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(k)}"\r\n\r\n${v}\r\n`
  )
  return {
    url,
    headers: { ...headers, "content-type": `multipart/form-data; boundary=${boundary}` },
    body: `${parts.join("")}--${boundary}--\r\n`
  }
}
