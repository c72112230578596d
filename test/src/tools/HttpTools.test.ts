/**
 * The model-facing input schema of an HTTP operation (spec 4.7 rule 2) on the
 * real petstore documents: Swagger 2.0 keeps the type on the parameter,
 * OpenAPI 3 under `schema`; a request body nests under `body`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { inputSchemaOf } from "../../../src/tools/OpenApiOperation.ts"
import * as OpenApiSpec from "../../../src/tools/OpenApiSpec.ts"

const examples = fileURLToPath(new URL("../../../node_modules/@readme/oas-examples/", import.meta.url))
const operationsOf = (path: string) =>
  Effect.map(
    OpenApiSpec.parse(readFileSync(examples + path, "utf8"), undefined),
    (loaded) => OpenApiSpec.operations(loaded.document)
  )
const named = (ops: ReadonlyArray<OpenApiSpec.Operation>, name: string) => {
  const op = ops.find((o) => o.name === name)
  return op === undefined ? assert.fail(`no operation ${name}`) : op
}

describe("HTTP tool input schemas", () => {
  it.effect("Swagger 2.0: path and query parameters with their type, format, items and description", () =>
    Effect.gen(function*() {
      const ops = yield* operationsOf("2.0/json/petstore.json")
      assert.deepStrictEqual(inputSchemaOf(named(ops, "getPetById")), {
        type: "object",
        properties: { petId: { type: "integer", format: "int64", description: "ID of pet to return" } },
        required: ["petId"]
      })
      const status = inputSchemaOf(named(ops, "findPetsByStatus"))
      assert.deepStrictEqual(status["required"], ["status"])
      assert.deepStrictEqual(
        (status["properties"] as Record<string, Record<string, unknown>>)["status"]?.["type"],
        "array"
      )
      const add = inputSchemaOf(named(ops, "addPet"))
      assert.deepStrictEqual(add["required"], ["body"])
      assert.deepStrictEqual((add["properties"] as Record<string, Record<string, unknown>>)["body"]?.["required"], [
        "name",
        "photoUrls"
      ])
    }))

  it.effect("OpenAPI 3.0: a required JSON request body nests under body; header parameters are top-level", () =>
    Effect.gen(function*() {
      const ops = yield* operationsOf("3.0/json/petstore.json")
      const add = inputSchemaOf(named(ops, "addPet"))
      assert.deepStrictEqual(add["required"], ["body"])
      assert.deepStrictEqual(Object.keys(add["properties"] as object), ["body"])
      const del = inputSchemaOf(named(ops, "deletePet"))
      assert.deepStrictEqual(Object.keys(del["properties"] as object).sort(), ["api_key", "petId"])
      assert.deepStrictEqual(del["required"], ["petId"])
    }))

  it.effect("Swagger 2.0 formData parameters become one object under body", () =>
    Effect.gen(function*() {
      const ops = yield* operationsOf("2.0/json/petstore.json")
      assert.deepStrictEqual(inputSchemaOf(named(ops, "updatePetWithForm")), {
        type: "object",
        properties: {
          petId: { type: "integer", format: "int64", description: "ID of pet that needs to be updated" },
          body: {
            type: "object",
            properties: {
              name: { type: "string", description: "Updated name of the pet" },
              status: { type: "string", description: "Updated status of the pet" }
            }
          }
        },
        required: ["petId"]
      })
    }))
})
