/**
 * OpenAPI documents for the HTTP connection tests: the real ones of
 * @readme/oas-examples (the petstore in Swagger 2.0, OpenAPI 3.0 and 3.1, and
 * documents with naming and server edge cases), as text, and small documents
 * built by hand.
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

const examples = fileURLToPath(new URL("../../node_modules/@readme/oas-examples/", import.meta.url))
const example = (path: string) => readFileSync(examples + path, "utf8")

export const petstore2 = example("2.0/json/petstore.json")
export const petstore30 = example("3.0/json/petstore.json")
export const petstore31 = example("3.1/json/petstore.json")
export const noTags = example("3.0/json/petstore-simple-no-tags.json")
/** No operationIds, and servers[] built from variables. */
export const serverVariables = example("3.0/json/server-variables.json")
/** OpenAPI 3.1 with webhooks only: no paths, no servers. */
export const webhooksOnly = example("3.1/json/webhooks.json")

/** The operationIds of the petstore documents (all three versions), in document order. */
export const petstoreOperations = [
  "updatePet",
  "addPet",
  "findPetsByStatus",
  "findPetsByTags",
  "getPetById",
  "updatePetWithForm",
  "deletePet",
  "uploadFile",
  "getInventory",
  "placeOrder",
  "getOrderById",
  "deleteOrder",
  "createUser",
  "createUsersWithArrayInput",
  "createUsersWithListInput",
  "loginUser",
  "logoutUser",
  "getUserByName",
  "updateUser",
  "deleteUser"
]

export const info = { title: "Test API", version: "1.0.0" }
const ok = { "200": { description: "OK" } }

/** An OpenAPI 3.0 document; `servers` omitted when null. */
export const openapi = (
  paths: Record<string, Record<string, unknown>>,
  servers: ReadonlyArray<{ readonly url: string }> | null = [{ url: "https://api.example.com/v1" }]
) => JSON.stringify({ openapi: "3.0.3", info, ...(servers === null ? {} : { servers }), paths })

export const op = (
  operationId?: string
) => (operationId === undefined ? { responses: ok } : { operationId, responses: ok })

/** A small valid inline document: one operation, `listItems`. */
export const tinySpec = openapi({ "/items": { get: op("listItems") } })
