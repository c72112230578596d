import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { Agent } from "../../domain/Agent.ts"
import * as TestServer from "../support/TestServer.ts"

TestServer.suite()("smoke", (it) => {
  it.effect("creates and reads an agent", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const created = yield* TestServer.expectOk(
        yield* api.request("POST", "/v1/agents", { body: { context: "hi" } }),
        200,
        Agent
      )
      const read = yield* TestServer.expectOk(yield* api.request("GET", `/v1/agents/${created.id}`), 200, Agent)
      assert.deepStrictEqual(read, created)
    }))
})
