/**
 * GitHub's official OpenAPI description (`@octokit/openapi`, api.github.com)
 * as the fake's source of truth for answer shapes: `shaped` builds an answer
 * from the operation's response schema (every required field, with a value of
 * its type) with the fake's real fields laid over it, and `validator` checks
 * an answer against the same schema with ajv (the fake's own test).
 */
import { Ajv } from "ajv"
import addFormats from "ajv-formats"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"

type Json = Record<string, unknown>

const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

let loaded: Json | undefined
/** The description, parsed once per process (~13 MB). */
export const openApi = (): Json => {
  if (loaded === undefined) {
    const path = createRequire(import.meta.url).resolve("@octokit/openapi/generated/api.github.com.json")
    loaded = JSON.parse(readFileSync(path, "utf8")) as Json
  }
  return loaded
}

const pointer = (ref: string): unknown =>
  ref.slice(2).split("/").reduce<unknown>(
    (node, key) => (isObject(node) ? node[key.replaceAll("~1", "/").replaceAll("~0", "~")] : undefined),
    openApi()
  )

const deref = (
  node: unknown
): unknown => (isObject(node) && typeof node["$ref"] === "string" ? deref(pointer(node["$ref"])) : node)

/** The JSON schema of an operation's answer (`path` as the description writes it: `/repos/{owner}/{repo}`). */
export const responseSchema = (method: string, path: string, status: number): Json => {
  const paths = openApi()["paths"]
  const op = isObject(paths) && isObject(paths[path]) ? paths[path][method.toLowerCase()] : undefined
  const responses = isObject(op) ? op["responses"] : undefined
  const response = deref(isObject(responses) ? responses[String(status)] : undefined)
  const content = isObject(response) ? response["content"] : undefined
  const json = isObject(content) ? content["application/json"] : undefined
  const schema = isObject(json) ? json["schema"] : undefined
  if (!isObject(schema)) throw new Error(`the description has no JSON answer ${status} for ${method} ${path}`)
  return schema
}

const formats: Record<string, unknown> = {
  "date-time": "2026-01-01T00:00:00Z",
  uri: "https://github.example/x",
  email: "octocat@example.com",
  date: "2026-01-01"
}

/** A minimal value of `schema`: required properties only, null where nullable. */
export const sample = (node: unknown, depth = 0): unknown => {
  const schema = deref(node)
  if (!isObject(schema) || depth > 12) return null
  if (schema["nullable"] === true) return null
  if (Array.isArray(schema["allOf"])) {
    return sample(flatten(schema), depth + 1)
  }
  for (const key of ["oneOf", "anyOf"]) {
    const options = schema[key]
    if (Array.isArray(options)) return sample(options[0], depth + 1)
  }
  if (Array.isArray(schema["enum"])) return schema["enum"][0]
  switch (schema["type"]) {
    case "object": {
      const properties = isObject(schema["properties"]) ? schema["properties"] : {}
      const required = Array.isArray(schema["required"]) ? schema["required"].map(String) : []
      return Object.fromEntries(required.map((name) => [name, sample(properties[name], depth + 1)]))
    }
    case "array":
      return []
    case "string":
      return typeof schema["format"] === "string" ? formats[schema["format"]] ?? "x" : "x"
    case "integer":
    case "number":
      return typeof schema["minimum"] === "number" ? schema["minimum"] : 1
    case "boolean":
      return false
    default:
      return isObject(schema["properties"]) ? sample({ ...schema, type: "object" }, depth) : null
  }
}

/** allOf's parts as one object schema (their properties and required fields together). */
const flatten = (schema: Json): Json => {
  if (!Array.isArray(schema["allOf"])) return schema
  const parts = schema["allOf"].map((p) => flatten(deref(p) as Json))
  return {
    type: "object",
    properties: Object.assign({}, ...parts.map((p) => (isObject(p["properties"]) ? p["properties"] : {}))),
    required: parts.flatMap((p) => (Array.isArray(p["required"]) ? p["required"] : []))
  }
}

/** The option of anyOf / oneOf a value takes: the first of its JSON type. */
const optionFor = (options: ReadonlyArray<unknown>, value: unknown): unknown => {
  const kind = Array.isArray(value) ? "array" : isObject(value) ? "object" : typeof value
  return options.find((o) => {
    const s = deref(o)
    return isObject(s) &&
      (s["type"] === kind || (kind === "object" && (isObject(s["properties"]) || Array.isArray(s["allOf"]))))
  }) ?? options[0]
}

/** `value` completed to `schema`: every required field it lacks gets a value of its type, at every depth. */
export const fill = (node: unknown, value: unknown, depth = 0): unknown => {
  const raw = deref(node)
  if (!isObject(raw) || depth > 20) return value
  if (value === undefined) return sample(raw, depth)
  if (value === null) return null
  const schema = flatten(raw)
  for (const key of ["anyOf", "oneOf"]) {
    const options = schema[key]
    if (Array.isArray(options)) return fill(optionFor(options, value), value, depth + 1)
  }
  if (Array.isArray(value)) return value.map((v) => fill(schema["items"], v, depth + 1))
  if (!isObject(value)) return value
  const properties = isObject(schema["properties"]) ? schema["properties"] : {}
  const required = Array.isArray(schema["required"]) ? schema["required"].map(String) : []
  const out: Json = {}
  for (const name of required) if (!(name in value)) out[name] = sample(properties[name], depth + 1)
  for (const [k, v] of Object.entries(value)) out[k] = k in properties ? fill(properties[k], v, depth + 1) : v
  return out
}

/** An answer of the operation: the fake's own fields, completed with the schema's required ones. */
export const shaped = (method: string, path: string, status: number, fields: unknown): unknown =>
  fill(responseSchema(method, path, status), fields)

/** OpenAPI 3.0's `nullable` as JSON Schema (ajv accepts it only beside a `type`). */
const jsonSchemaOf = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(jsonSchemaOf)
  if (!isObject(node)) return node
  const out: Json = {}
  for (const [k, v] of Object.entries(node)) if (k !== "nullable") out[k] = jsonSchemaOf(v)
  if (node["nullable"] !== true) return out
  // A nullable enum admits null too (OpenAPI 3.0); JSON Schema needs it listed.
  const nullable = Array.isArray(out["enum"]) ? { ...out, enum: [...out["enum"], null] } : out
  return typeof out["type"] === "string"
    ? { ...nullable, type: [out["type"], "null"] }
    : { anyOf: [out, { type: "null" }] }
}

/** Validates answers against the description (compiled per operation, cached). */
export const validator = () => {
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true })
  addFormats.default(ajv)
  ajv.addSchema(jsonSchemaOf(openApi()) as Json, "gh")
  const cache = new Map<string, ReturnType<typeof ajv.compile>>()
  return (method: string, path: string, status: number, body: unknown): ReadonlyArray<string> => {
    const key = `${method} ${path} ${status}`
    let validate = cache.get(key)
    if (validate === undefined) {
      responseSchema(method, path, status)
      const escaped = path.replaceAll("~", "~0").replaceAll("/", "~1")
      validate = ajv.compile({
        $ref: `gh#/paths/${escaped}/${method.toLowerCase()}/responses/${status}/content/application~1json/schema`
      })
      cache.set(key, validate)
    }
    return validate(body) ? [] : (validate.errors ?? []).map((e) => `${key}: ${e.instancePath} ${e.message ?? ""}`)
  }
}
