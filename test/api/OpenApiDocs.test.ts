/**
 * The reference page explains itself: in the OpenAPI document it is built
 * from (the one served at /v1/openapi.json), every operation has a summary
 * and a description, every group a description, and every JSON request body
 * an example; each example is a body the operation accepts (decoded with the
 * endpoint's own payload schema).
 */
import SwaggerParser from "@apidevtools/swagger-parser"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { HttpApi, OpenApi } from "effect/http-api"
import { Api } from "../../http/Api.ts"

const spec = OpenApi.fromApi(Api)

const methods = ["get", "post", "put", "patch", "delete"] as const

const operations = () =>
  Object.entries(spec.paths).flatMap(([path, item]) =>
    methods.flatMap((method) => {
      const op = item[method]
      return op === undefined ? [] : [{ name: `${method.toUpperCase()} ${path}`, op }]
    })
  )

/** The JSON request body's media type, when the operation takes one. */
const jsonBody = (op: OpenApi.OpenAPISpecOperation) => op.requestBody?.content["application/json"]

const blank = (text: string | undefined) => text === undefined || text.trim() === ""

describe("the OpenAPI document", () => {
  it("gives every operation a summary and a description, and every JSON request body an example", () => {
    const all = operations()
    assert.isTrue(all.length > 60)
    const missing = all.flatMap(({ name, op }) => [
      ...(blank(op.summary) ? [`${name}: summary`] : []),
      ...(blank(op.description) ? [`${name}: description`] : []),
      ...(jsonBody(op) !== undefined && !("example" in (jsonBody(op) ?? {})) ? [`${name}: request body example`] : [])
    ])
    assert.deepStrictEqual(missing, [])
    // Summaries are one short line; descriptions say more than the summary.
    for (const { name, op } of all) {
      assert.isAtMost(op.summary?.length ?? 0, 80, name)
      assert.notStrictEqual(op.description, op.summary, name)
    }
  })

  it.effect("stays a valid OpenAPI document with the examples in it", () =>
    // validate() dereferences in place: give it a copy.
    Effect.promise(() => SwaggerParser.validate(structuredClone(spec))).pipe(Effect.asVoid))

  it("describes every group", () => {
    assert.deepStrictEqual(spec.tags.filter((tag) => blank(tag.description)).map((tag) => tag.name), [])
  })

  it("gives only examples that the operation accepts", () => {
    const invalid: Array<string> = []
    HttpApi.reflect(Api, {
      onGroup: () => undefined,
      onEndpoint: ({ endpoint }) => {
        const payload = endpoint.payload.get("application/json")
        if (payload === undefined) return
        const path = endpoint.path.replace(/:(\w+)/g, "{$1}")
        const op = operations().find(({ name }) => name === `${endpoint.method} ${path}`)?.op
        const media = op === undefined ? undefined : jsonBody(op)
        const example = media !== undefined && "example" in media ? media.example : undefined
        for (const schema of payload.schemas) {
          if (!("ast" in schema)) continue
          const decoded = Schema.decodeUnknownExit(Schema.make<Schema.Codec<unknown, unknown>>(schema.ast))(example, {
            onExcessProperty: "error"
          })
          if (decoded._tag === "Failure") invalid.push(`${endpoint.method} ${endpoint.path}: ${String(decoded.cause)}`)
        }
      }
    })
    assert.deepStrictEqual(invalid, [])
  })
})
