import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Agent } from "../../domain/Agent.ts"
import { RunReceipt } from "../../domain/Run.ts"
import { ThreadCreated } from "../../domain/Thread.ts"
import * as TestServer from "../support/TestServer.ts"

layer(TestServer.layer(), { timeout: 60_000, excludeTestServices: true })("runs smoke", (it) => {
  it.effect("a message streams a run", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const agent = yield* TestServer.expectOk(yield* api.request("POST", "/v1/agents", { body: {} }), 200, Agent)
      const thread = yield* TestServer.expectOk(yield* api.request("POST", "/v1/threads", { body: { agentId: agent.id } }), 201, ThreadCreated)
      const receipt = yield* TestServer.expectOk(
        yield* api.request("POST", `/v1/threads/${thread.id}/messages`, { body: { input: "hello" }, headers: { accept: "application/json" } }),
        200,
        RunReceipt
      )
      const stream = yield* api.request("GET", `/v1/runs/${receipt.runId}/stream`)
      console.log(stream.status, stream.text)
      assert.strictEqual(stream.status, 200)
    }))
})
