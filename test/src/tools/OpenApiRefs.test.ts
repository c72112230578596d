/**
 * The linear-time `$ref` resolution of OpenAPI documents (src/tools/OpenApiRefs.ts):
 * references resolve to shared nodes (a fan-out twenty levels deep resolves at
 * once, and what it would expand to is measured within a budget), recursive
 * references and references that point nowhere or outside are kept, pointers
 * are unescaped, and a chain of references is followed.
 */
import { assert, describe, it } from "@effect/vitest"
import { dereference } from "../../../src/tools/OpenApiRefs.ts"
import { measure } from "../../../src/tools/SchemaBudget.ts"
import { fanOutSchemas } from "../../support/SchemaBombs.ts"

const at = (doc: unknown, ...path: ReadonlyArray<string>): unknown =>
  path.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], doc)

describe("OpenAPI $ref resolution", () => {
  it("a fan-out twenty levels deep resolves to shared nodes; measuring its expansion stops at the budget", () => {
    const doc = dereference({ components: { schemas: fanOutSchemas(20) } })
    const l0 = at(doc, "components", "schemas", "L0")
    assert.strictEqual(at(l0, "properties", "p0"), at(l0, "properties", "p9"))
    assert.strictEqual(at(l0, "properties", "p0"), at(doc, "components", "schemas", "L1"))
    assert.deepStrictEqual(measure(l0, { maxDepth: 64, maxBytes: 100_000 }), { _tag: "TooLarge", limit: 100_000 })
    assert.deepStrictEqual(measure(l0, { maxDepth: 10, maxBytes: Number.POSITIVE_INFINITY }), {
      _tag: "TooDeep",
      limit: 10
    })
  })

  it("recursive references stay references; unknown, external and escaped pointers; chains are followed", () => {
    const doc = dereference({
      defs: {
        Node: { type: "object", properties: { next: { $ref: "#/defs/Node" } } },
        "a/b~c": { type: "string" },
        Alias: { $ref: "#/defs/Alias2" },
        Alias2: { $ref: "#/defs/a~1b~0c" },
        LoopA: { $ref: "#/defs/LoopB" },
        LoopB: { $ref: "#/defs/LoopA" }
      },
      uses: {
        node: { $ref: "#/defs/Node" },
        escaped: { $ref: "#/defs/a~1b~0c" },
        alias: { $ref: "#/defs/Alias" },
        missing: { $ref: "#/defs/Nope" },
        external: { $ref: "other.json#/defs/Node" },
        loop: { $ref: "#/defs/LoopA" },
        item: { $ref: "#/list/1" }
      },
      list: [{ type: "null" }, { type: "integer" }]
    })
    assert.deepStrictEqual(at(doc, "uses", "node"), {
      type: "object",
      properties: { next: { $ref: "#/defs/Node" } }
    })
    assert.deepStrictEqual(at(doc, "uses", "escaped"), { type: "string" })
    assert.deepStrictEqual(at(doc, "uses", "alias"), { type: "string" })
    assert.deepStrictEqual(at(doc, "uses", "missing"), { $ref: "#/defs/Nope" })
    assert.deepStrictEqual(at(doc, "uses", "external"), { $ref: "other.json#/defs/Node" })
    assert.deepStrictEqual(at(doc, "uses", "item"), { type: "integer" })
    assert.property(at(doc, "uses", "loop"), "$ref")
    // No cycle was made: the resolved document serializes.
    assert.doesNotThrow(() => JSON.stringify(doc))
  })
})
