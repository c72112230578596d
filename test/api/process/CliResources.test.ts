/**
 * The CLI's resource commands (run in this process through `runCli`,
 * test/support/InProcessCli.ts) against one service process (embedded
 * storage, the scripted model, a real MCP server): agents, threads and runs
 * (list with filters, get, cancel),
 * tool servers (with `test` against the MCP server), HTTP connections,
 * secrets (a value read from stdin, never printed), hooks and result
 * handlers: each family's happy path with its exact lines, `--json`
 * answers as the API's shapes, and its failures with their exit codes.
 * A secret's value read from stdin goes through the bin as a process
 * (`node src/cli.mjs`): the process's own standard input.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer, Schema } from "effect"
import { join } from "node:path"
import { Agent } from "../../../domain/Agent.ts"
import { HttpConnection } from "../../../domain/HttpConnection.ts"
import { Page } from "../../../domain/Page.ts"
import { ResultHandler } from "../../../domain/ResultHandler.ts"
import { Run } from "../../../domain/Run.ts"
import { Secret } from "../../../domain/Secret.ts"
import { Thread } from "../../../domain/Thread.ts"
import { ToolApprovalHook } from "../../../domain/ToolApprovalHook.ts"
import { ToolServer } from "../../../domain/ToolServer.ts"
import { gateServer } from "../../support/GateMcpServer.ts"
import * as InProcessCli from "../../support/InProcessCli.ts"
import * as ServiceProcess from "../../support/ServiceProcess.ts"
import { freePort } from "../../support/TestServer.ts"

const workspaces = ["agents", "threads", "tools", "secrets", "hooks"] as const
type Workspace = (typeof workspaces)[number]
const keyOf = (w: Workspace) => `sk_cli_res_${w}`

class Service extends Context.Service<Service, { readonly url: string }>()("test/CliResourcesService") {}

const ServiceLive = Layer.effect(Service)(
  Effect.gen(function*() {
    const dir = yield* ServiceProcess.tempDataDir("svc-cli-resources-")
    const service = yield* ServiceProcess.start({
      SVC_DATA_DIR: join(dir, "data"),
      SVC_QUIET: "1",
      SVC_ALLOW_PRIVATE_URLS: "1",
      SVC_API_KEYS: workspaces.map((w) => `${keyOf(w)}:org_cli_res:${w}`).join(","),
      PORT: String(yield* freePort),
      SVC_RUNNER_PORT: String(yield* freePort)
    })
    return { url: service.url }
  })
)

type Result = { readonly code: number | null; readonly stdout: string; readonly stderr: string }

/** `agent-service ...args` as key `w`, `stdin` on its standard input. */
const cli = (w: Workspace, args: ReadonlyArray<string>, stdin?: string) =>
  Effect.flatMap(Service, ({ url }) => InProcessCli.cli(args, { SVC_URL: url, SVC_API_KEY: keyOf(w) }, stdin))

/** The same, through the bin as a process (`node src/cli.mjs ...args`). */
const bin = (w: Workspace, args: ReadonlyArray<string>, stdin: string) =>
  Effect.flatMap(
    Service,
    ({ url }) => ServiceProcess.run("src/cli.mjs", args, { SVC_URL: url, SVC_API_KEY: keyOf(w) }, stdin)
  )

/** Asserts exit code 0 and returns stdout's lines. */
const ok = (result: Result) => {
  assert.strictEqual(result.code, 0, result.stderr)
  return result.stdout.split("\n").slice(0, -1)
}

/** Asserts exit code 0 and decodes stdout (a `--json` answer) with `schema`. */
const okJson = <A>(result: Result, schema: Schema.Decoder<A>) => {
  assert.strictEqual(result.code, 0, result.stderr)
  return ServiceProcess.decodeJson(schema, result.stdout)
}

/** Asserts the exit code, nothing on stdout, and returns stderr. */
const failed = (result: Result, code: number) => {
  assert.strictEqual(result.code, code, result.stderr)
  assert.strictEqual(result.stdout, "")
  return result.stderr
}

const envelope = (message: string, code: string, status: number) =>
  new RegExp(
    `^error: ${
      message.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
    } \\(${code}, HTTP ${status}, request req_[0-9A-Za-z]{22}\\)\\n$`
  )

const spec = JSON.stringify({
  openapi: "3.0.0",
  info: { title: "pets", version: "1" },
  servers: [{ url: "http://127.0.0.1:9/" }],
  paths: { "/pets": { get: { operationId: "listPets", responses: { "200": { description: "ok" } } } } }
})

layer(ServiceLive, { timeout: 300_000, excludeTestServices: true })("cli resource commands", (it) => {
  it.effect(
    "agents: create, get, update, list --json, delete; an unknown agent exits 1, a bad band 2",
    () =>
      Effect.gen(function*() {
        const [id] = ok(
          yield* cli("agents", ["agents", "create", "--data", "{\"context\":\"Plan first.\"}", "--band", "lite"])
        )
        assert.match(id, /^agent_[0-9A-Za-z]{22}$/)
        const agent = okJson(yield* cli("agents", ["agents", "get", id, "--json"]), Agent)
        assert.deepStrictEqual([agent.band, agent.context[0]?.content], ["lite", "Plan first."])
        assert.deepStrictEqual(ok(yield* cli("agents", ["agents", "get", id])), [
          `${id}  lite  ${agent.createdAt}  Plan first.`
        ])
        assert.deepStrictEqual(
          ok(yield* cli("agents", ["agents", "update", id, "--band", "core", "--metadata", "a=1"])),
          [
            `${id}  core  ${agent.createdAt}  Plan first.`
          ]
        )
        const page = okJson(yield* cli("agents", ["agents", "list", "--json"]), Page(Agent))
        assert.deepStrictEqual(page.data.map((a): unknown => ({ id: a.id, band: a.band, metadata: a.metadata })), [
          { id, band: "core", metadata: { a: "1" } }
        ])
        assert.deepStrictEqual(ok(yield* cli("agents", ["agents", "delete", id])), [`${id} deleted`])

        const gone = yield* cli("agents", ["agents", "get", id])
        assert.match(failed(gone, 1), envelope(`No agent with id '${id}'.`, "agent_not_found", 404))
        const bad = yield* cli("agents", ["agents", "update", id, "--band", "ultra"])
        assert.strictEqual(
          failed(bad, 2),
          `error: Invalid agent change: band: Expected "lite" | "core" | "frontier" (invalid_request)\n`
        )
        const badData = yield* cli("agents", ["agents", "create", "--data", "[1]"])
        assert.strictEqual(failed(badData, 2), "error: --data must be a JSON object (the request body)\n")
      }),
    600_000
  )

  it.effect(
    "threads and runs: create, list, get, history --json, runs list with filters, get, cancel, delete",
    () =>
      Effect.gen(function*() {
        const [agentId] = ok(yield* cli("threads", ["agents", "create", "--context", "Be brief."]))
        const [threadId] = ok(yield* cli("threads", ["threads", "create", "--agent", agentId, "--metadata", "k=v"]))
        assert.match(threadId, /^thread_[0-9A-Za-z]{22}$/)
        const thread = okJson(yield* cli("threads", ["threads", "get", threadId, "--json"]), Thread)
        assert.deepStrictEqual([thread.agentId, thread.status, thread.metadata], [agentId, "idle", { k: "v" }])
        assert.deepStrictEqual(ok(yield* cli("threads", ["threads", "list", "--agent", agentId])), [
          `${threadId}  ${agentId}  idle  ${thread.createdAt}`
        ])
        assert.deepStrictEqual(ok(yield* cli("threads", ["threads", "history", threadId, "--json"])), ["[]"])
        assert.deepStrictEqual(ok(yield* cli("threads", ["threads", "cancel", threadId])), [
          `${threadId}: no active run`
        ])

        const sent = ok(yield* cli("threads", ["send", threadId, "hello"]))
        const runId = sent[sent.length - 1].split(" ")[1]
        const run = okJson(yield* cli("threads", ["runs", "get", runId, "--json"]), Run)
        assert.strictEqual(run.status, "completed")
        const line = `${runId}  completed  ${agentId}  ${threadId}  ${run.createdAt}`
        assert.deepStrictEqual(ok(yield* cli("threads", ["runs", "get", runId])), [line])
        assert.deepStrictEqual(
          ok(yield* cli("threads", ["runs", "list", "--thread", threadId, "--status", "completed"])),
          [
            line
          ]
        )
        assert.deepStrictEqual(ok(yield* cli("threads", ["runs", "list", "--agent", agentId, "--status", "failed"])), [
          "no runs"
        ])
        const since = ok(yield* cli("threads", ["runs", "list", "--since", "2999-01-01T00:00:00Z"]))
        assert.deepStrictEqual(since, ["no runs"])
        const page = okJson(yield* cli("threads", ["runs", "list", "--limit", "1", "--json"]), Page(Run))
        assert.deepStrictEqual(page.data.map((r) => r.id), [runId])

        // Cancel is idempotent: a finished run is printed as it is.
        assert.deepStrictEqual(ok(yield* cli("threads", ["runs", "cancel", runId])), [line])
        const badStatus = yield* cli("threads", ["runs", "list", "--status", "done"])
        assert.strictEqual(badStatus.code, 2)
        const noAgent = yield* cli("threads", ["threads", "list"])
        assert.strictEqual(noAgent.code, 2)
        assert.match(noAgent.stderr, /--agent/)

        assert.deepStrictEqual(ok(yield* cli("threads", ["threads", "delete", threadId])), [`${threadId} deleted`])
        const gone = yield* cli("threads", ["threads", "history", threadId])
        assert.match(failed(gone, 1), /\(thread_not_found, HTTP 404, request req_[0-9A-Za-z]{22}\)\n$/)
      }),
    600_000
  )

  it.effect(
    "tool servers and HTTP connections: create, list, update, test, get --json, delete; a bad body exits 2",
    () =>
      Effect.gen(function*() {
        const gate = yield* gateServer
        const body = JSON.stringify({ name: "gate", transport: "http", url: gate.url })
        const [serverId] = ok(yield* cli("tools", ["tool-servers", "create", "--data", body]))
        assert.match(serverId, /^ts_[0-9A-Za-z]{22}$/)
        assert.deepStrictEqual(ok(yield* cli("tools", ["tool-servers", "list"])), [
          `${serverId}  gate  http  ${gate.url}  approval none`
        ])
        assert.deepStrictEqual(
          ok(yield* cli("tools", ["tool-servers", "update", serverId, "--data", "{\"approval\":\"always\"}"])),
          [`${serverId}  gate  http  ${gate.url}  approval always`]
        )
        const tested = ok(yield* cli("tools", ["tool-servers", "test", serverId]))
        assert.match(tested[0] ?? "", /^connected in \d+ ms: 3 tools: echo, fail, wait$/)
        const server = okJson(yield* cli("tools", ["tool-servers", "get", serverId, "--json"]), ToolServer)
        assert.deepStrictEqual([server.id, server.approval], [serverId, "always"])
        assert.deepStrictEqual(ok(yield* cli("tools", ["tool-servers", "delete", serverId])), [`${serverId} deleted`])
        const noUrl = yield* cli("tools", [
          "tool-servers",
          "create",
          "--data",
          "{\"name\":\"x\",\"transport\":\"http\"}"
        ])
        assert.match(failed(noUrl, 2), /^error: Invalid tool server: url: .+ \(invalid_request\)\n$/)
        const badId = yield* cli("tools", ["tool-servers", "get", "hc_x"])
        assert.match(failed(badId, 2), /^error: Invalid tool server id: must be an id starting with 'ts_'/)

        const [connectionId] = ok(
          yield* cli("tools", ["http-connections", "create", "--data", JSON.stringify({ name: "pets", spec })])
        )
        assert.match(connectionId, /^hc_[0-9A-Za-z]{22}$/)
        assert.deepStrictEqual(ok(yield* cli("tools", ["http-connections", "list"])), [
          `${connectionId}  pets  (the spec's server)  approval none`
        ])
        const patched = yield* cli("tools", [
          "http-connections",
          "update",
          connectionId,
          "--data",
          "{\"baseUrl\":\"http://127.0.0.1:9/v2\"}",
          "--json"
        ])
        assert.strictEqual(okJson(patched, HttpConnection).baseUrl, "http://127.0.0.1:9/v2")
        assert.deepStrictEqual(
          ok(yield* cli("tools", ["http-connections", "delete", connectionId, "--json"])),
          [
            JSON.stringify({ id: connectionId, object: "http_connection", deleted: true }, null, 2)
          ].flatMap((t) => t.split("\n"))
        )
        const missing = yield* cli("tools", ["http-connections", "get", connectionId])
        assert.match(failed(missing, 1), /\(http_connection_not_found, HTTP 404, request req_[0-9A-Za-z]{22}\)\n$/)
      }).pipe(Effect.scoped),
    600_000
  )

  it.effect("secrets: the value from stdin, never printed; rotate; list --json; delete", () =>
    Effect.gen(function*() {
      const [id] = ok(
        yield* bin("secrets", ["secrets", "create", "--data", "{\"name\":\"gh\"}", "--stdin", "value"], "tok_1\n")
      )
      assert.match(id, /^sec_[0-9A-Za-z]{22}$/)
      const secret = okJson(yield* cli("secrets", ["secrets", "get", id, "--json"]), Secret)
      assert.deepStrictEqual(ok(yield* cli("secrets", ["secrets", "list"])), [
        `${id}  gh  svc  ${secret.updatedAt}`
      ])
      const rotated = yield* cli("secrets", ["secrets", "rotate", id, "--stdin", "value", "--json"], "tok_2")
      assert.isAbove(okJson(rotated, Secret).configVersion, secret.configVersion)
      const listed = yield* cli("secrets", ["secrets", "list", "--json"])
      assert.notInclude(listed.stdout, "tok_")
      assert.deepStrictEqual(okJson(listed, Page(Secret)).data.map((s) => s.id), [id])
      const noValue = yield* cli("secrets", ["secrets", "create", "--data", "{\"name\":\"x\"}"])
      assert.match(failed(noValue, 2), /^error: Invalid secret: value: .+ \(invalid_request\)\n$/)
      assert.deepStrictEqual(ok(yield* cli("secrets", ["secrets", "delete", id])), [`${id} deleted`])
    }), 600_000)

  it.effect(
    "hooks and result handlers: the signing secret from stdin; create, list, update, get --json, delete",
    () =>
      Effect.gen(function*() {
        const signing = "whsec_cli_signing_secret_0123456789"
        const [hookId] = ok(
          yield* cli("hooks", [
            "hooks",
            "create",
            "--data",
            "{\"name\":\"review\",\"url\":\"http://127.0.0.1:9/hook\"}",
            "--stdin",
            "secret"
          ], signing)
        )
        assert.match(hookId, /^hook_[0-9A-Za-z]{22}$/)
        assert.deepStrictEqual(ok(yield* cli("hooks", ["hooks", "list"])), [
          `${hookId}  review  http://127.0.0.1:9/hook  enabled  on error deny`
        ])
        assert.deepStrictEqual(ok(yield* cli("hooks", ["hooks", "update", hookId, "--data", "{\"enabled\":false}"])), [
          `${hookId}  review  http://127.0.0.1:9/hook  disabled  on error deny`
        ])
        const rotated = yield* cli(
          "hooks",
          ["hooks", "rotate-secret", hookId, "--stdin", "secret", "--json"],
          `${signing}_2`
        )
        assert.notInclude(rotated.stdout, signing)
        assert.strictEqual(okJson(rotated, ToolApprovalHook).id, hookId)
        assert.deepStrictEqual(ok(yield* cli("hooks", ["hooks", "delete", hookId])), [`${hookId} deleted`])

        const [handlerId] = ok(
          yield* cli("hooks", [
            "result-handlers",
            "create",
            "--data",
            "{\"kind\":\"artifact\",\"name\":\"exports\",\"url\":\"http://127.0.0.1:9/exports\"}",
            "--stdin",
            "secret"
          ], signing)
        )
        assert.match(handlerId, /^rh_[0-9A-Za-z]{22}$/)
        assert.deepStrictEqual(ok(yield* cli("hooks", ["result-handlers", "list"])), [
          `${handlerId}  exports  artifact  http://127.0.0.1:9/exports`
        ])
        const handler = okJson(yield* cli("hooks", ["result-handlers", "get", handlerId, "--json"]), ResultHandler)
        assert.strictEqual(handler.name, "exports")
        assert.deepStrictEqual(ok(yield* cli("hooks", ["result-handlers", "delete", handlerId])), [
          `${handlerId} deleted`
        ])
        const noSecret = yield* cli("hooks", [
          "result-handlers",
          "create",
          "--data",
          "{\"kind\":\"artifact\",\"name\":\"x\",\"url\":\"http://127.0.0.1:9/x\"}"
        ])
        assert.match(failed(noSecret, 1), /\(result_handler_secret_missing, HTTP 400, request req_[0-9A-Za-z]{22}\)\n$/)
      }),
    600_000
  )
})
