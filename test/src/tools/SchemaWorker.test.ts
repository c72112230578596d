/**
 * Tenants' JSON Schemas checked and used off the thread that serves requests
 * (src/tools/SchemaWorker.ts): patterns run on RE2, in linear time, so the
 * classic backtracking pattern answers at once on an input that would take a
 * backtracking engine longer than the universe's age; patterns RE2 cannot run,
 * schemas past their bounds, unresolvable references and $async schemas are
 * refused; a validation that does not end within its time limit is stopped
 * (TestClock) while this thread stays free, and the next one is served by a
 * new worker.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { SchemaLimits } from "../../../src/tools/SchemaBudget.ts"
import * as SchemaWorker from "../../../src/tools/SchemaWorker.ts"
import {
  backtracking,
  exponentialSchema,
  exponentialValue,
  fanOutJsonSchema,
  nonLinearPatterns
} from "../../support/SchemaBombs.ts"

const nested = (depth: number): Record<string, unknown> => {
  let schema: Record<string, unknown> = { type: "string" }
  for (let i = 0; i < depth; i++) schema = { type: "object", properties: { a: schema } }
  return schema
}

describe("schema worker", () => {
  it.effect("a backtracking pattern runs in linear time: 5,000 a's and a '!' fail it at once", () =>
    Effect.gen(function*() {
      const schema = { type: "string", pattern: backtracking.pattern }
      assert.deepStrictEqual(yield* SchemaWorker.validate(schema, backtracking.input(5_000)), {
        _tag: "Invalid",
        message: "data must match pattern \"^(a+)+$\""
      })
      assert.deepStrictEqual(yield* SchemaWorker.validate(schema, "aaaa"), { _tag: "Valid" })
      const keys = { type: "object", patternProperties: { [backtracking.pattern]: {} }, additionalProperties: false }
      assert.deepStrictEqual(yield* SchemaWorker.validate(keys, { [backtracking.input(5_000)]: 1 }), {
        _tag: "Invalid",
        message: "data must NOT have additional properties"
      })
    }))

  it.effect.each(nonLinearPatterns)("a pattern RE2 cannot run is refused: %s", (pattern) =>
    Effect.gen(function*() {
      const problem = yield* SchemaWorker.check({ type: "string", pattern })
      assert.match(problem ?? "", /^has a pattern the linear-time engine cannot run \(RE2: /)
    }))

  it.effect("bounds, meta-schema, references and $async: each refusal says why", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* SchemaWorker.check(nested(SchemaLimits.maxDepth)),
        `is nested deeper than ${SchemaLimits.maxDepth} levels`
      )
      assert.strictEqual(yield* SchemaWorker.check(nested(10)), undefined)
      const wide = {
        type: "object",
        properties: { a: { description: "x".repeat(SchemaLimits.maxValidatedSchemaBytes) } }
      }
      assert.strictEqual(
        yield* SchemaWorker.check(wide),
        `is larger than ${SchemaLimits.maxValidatedSchemaBytes} bytes`
      )
      assert.match((yield* SchemaWorker.check({ type: "nonsense" })) ?? "", /^is not a valid JSON Schema: /)
      assert.strictEqual(
        yield* SchemaWorker.check({ $ref: "https://example.com/schema.json" }),
        "cannot be compiled: can't resolve reference https://example.com/schema.json from id #"
      )
      assert.strictEqual(yield* SchemaWorker.check({ $async: true }), "is an $async schema, which is not supported")
      // $refs are not expanded: a fan-out of eight levels is a small schema.
      assert.strictEqual(yield* SchemaWorker.check(fanOutJsonSchema(8)), undefined)
      assert.deepStrictEqual(
        yield* SchemaWorker.validate({ type: "object" }, exponentialValue(SchemaLimits.maxValueDepth + 1)),
        { _tag: "Invalid", message: `the value is nested deeper than ${SchemaLimits.maxValueDepth} levels` }
      )
    }))

  it.effect("a validation past its time is stopped while this thread stays free; the next one gets a new worker, whose start-up is not counted", () =>
    Effect.gen(function*() {
      const running = yield* Effect.forkChild(SchemaWorker.validate(exponentialSchema, exponentialValue(40)))
      yield* Effect.yieldNow
      // On this thread the validation would hold everything for days: here it waits on its worker.
      assert.isUndefined(running.pollUnsafe())
      yield* TestClock.adjust(SchemaLimits.validationTimeoutMs)
      assert.deepStrictEqual(yield* Fiber.join(running), {
        _tag: "Refused",
        problem: `took longer than ${SchemaLimits.validationTimeoutMs} ms to validate`
      })
      // The next one starts a new worker: its start-up is not the request's time (the clock moving on meanwhile refuses nothing).
      const next = yield* Effect.forkChild(SchemaWorker.validate(exponentialSchema, exponentialValue(3)))
      yield* Effect.yieldNow
      yield* TestClock.adjust(SchemaLimits.validationTimeoutMs + 1_000)
      assert.deepStrictEqual(yield* Fiber.join(next), { _tag: "Valid" })
    }))
})
