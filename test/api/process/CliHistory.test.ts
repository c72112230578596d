/**
 * `threads history` (run in this process through `runCli`,
 * test/support/InProcessCli.ts) against a service process (embedded
 * storage, the scripted model): a thread's turns read back in the lines
 * `send` printed (the user's text, an expected tool failure, reasoning, the
 * answers), a thread without runs, and an unknown thread's envelope with
 * exit code 1.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { join } from "node:path"
import { Page } from "../../../domain/Page.ts"
import { Run } from "../../../domain/Run.ts"
import { ThreadCreated } from "../../../domain/Thread.ts"
import * as InProcessCli from "../../support/InProcessCli.ts"
import * as ServiceProcess from "../../support/ServiceProcess.ts"
import { freePort } from "../../support/TestServer.ts"

const key = "sk_cli_history"

class Service extends Context.Service<Service, { readonly url: string }>()("test/CliHistoryService") {}

const ServiceLive = Layer.effect(Service)(
  Effect.gen(function*() {
    const dir = yield* ServiceProcess.tempDataDir("svc-cli-history-")
    const service = yield* ServiceProcess.start({
      SVC_DATA_DIR: join(dir, "data"),
      SVC_QUIET: "1",
      SVC_API_KEYS: `${key}:org_cli:history`,
      PORT: String(yield* freePort),
      SVC_RUNNER_PORT: String(yield* freePort)
    })
    return { url: service.url }
  })
)

const cli = (args: ReadonlyArray<string>) =>
  Effect.flatMap(Service, ({ url }) => InProcessCli.cli(args, { SVC_URL: url, SVC_API_KEY: key }))

/** Asserts exit code 0 and returns stdout's lines. */
const ok = (result: { readonly code: number | null; readonly stdout: string; readonly stderr: string }) => {
  assert.strictEqual(result.code, 0, result.stderr)
  return result.stdout.split("\n").slice(0, -1)
}

layer(ServiceLive, { timeout: 120_000, excludeTestServices: true })("cli threads history", (it) => {
  it.effect(
    "prints each turn: its run, the user's text, the calls and their results, the reasoning, the answer",
    () =>
      Effect.gen(function*() {
        const [agentId] = ok(yield* cli(["agents", "create"]))
        const first = ok(yield* cli(["send", "--agent", agentId, "/tool noop"]))
        const threadId = first[0].replace("[thread] ", "")
        ok(yield* cli(["send", "--reasoning", threadId, "/reason thinking hard"]))
        const { url } = yield* Service
        const runs = ServiceProcess.decodeJson(
          Page(Run),
          (yield* ServiceProcess.request(url, "GET", `/v1/runs?threadId=${threadId}`, key)).text
        ).data.toReversed()
        assert.strictEqual(runs.length, 2)
        const failure = "unknown_tool: there is no tool named 'noop'."
        assert.deepStrictEqual(ok(yield* cli(["threads", "history", threadId])), [
          `[turn] ${runs[0].id} ${runs[0].createdAt}`,
          "[user] /tool noop",
          "[tool] noop {}",
          `[tool error] noop: ${failure}`,
          `Result: ${failure}`,
          `[turn] ${runs[1].id} ${runs[1].createdAt}`,
          "[user] /reason thinking hard",
          "[thinking] thinking hard",
          "Echo: /reason thinking hard"
        ])
      }),
    90_000
  )

  it.effect(
    "a thread without runs has no messages; an unknown thread is its envelope on stderr, exit code 1",
    () =>
      Effect.gen(function*() {
        const { url } = yield* Service
        const [agentId] = ok(yield* cli(["agents", "create"]))
        const empty = ServiceProcess.decodeJson(
          ThreadCreated,
          (yield* ServiceProcess.request(url, "POST", "/v1/threads", key, { agentId })).text
        )
        assert.deepStrictEqual(ok(yield* cli(["threads", "history", empty.id])), ["no messages"])

        const unknown = yield* cli(["threads", "history", "thread_4pQ2wE8rT1yU4iO7aS0dFg"])
        assert.strictEqual(unknown.code, 1)
        assert.strictEqual(unknown.stdout, "")
        assert.match(
          unknown.stderr,
          /^error: .*thread_4pQ2wE8rT1yU4iO7aS0dFg.* \(thread_not_found, HTTP 404, request req_[0-9A-Za-z]{22}\)\n$/
        )
      }),
    60_000
  )
})
