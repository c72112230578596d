import { layer } from "@effect/vitest"
import { Effect } from "effect"
import * as TestServer from "../support/TestServer.ts"

layer(TestServer.layer({ maxBodyBytes: 1_048_576 }), { timeout: 60_000 })("agents", (it) => {
  it.effect("probe", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const bodies: ReadonlyArray<unknown> = [
        { foo: 1 },
        { capabilities: { foo: true } },
        { workspace: { type: "managed", foo: 1 } },
        { workspace: { type: "remote", environmentId: "e", foo: 1 } },
        { capabilities: { browser: { tabs: true, foo: 1 } } },
        { context: [{ content: "x", extra: 1 }] },
        { artifacts: { stream: { urls: "durable-only", foo: 1 } } },
        { metadata: { ["k".repeat(41)]: "v" } },
        { metadata: { a: 1 } },
        { band: "ultra" },
        { workspace: { type: "managed", network: { mode: "offline", foo: 1 } } },
      ]
      for (const body of bodies) {
        const r = yield* api.request("POST", "/v1/agents", { body })
        console.log(JSON.stringify(body).slice(0, 80), r.status, r.text)
      }
      for (const q of ["limit=0", "limit=abc", "cursor=zzz", "limit=1.5"]) {
        const r = yield* api.request("GET", `/v1/agents?${q}`)
        console.log(q, r.status, r.text)
      }
    }))
})
