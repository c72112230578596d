/**
 * The CLI (run in this process through `runCli`, test/support/InProcessCli.ts)
 * against a service process started here (embedded storage, the scripted
 * model, a real MCP server for tools that need approval): exact stdout lines
 * and exit codes of `agents list|create`, `send`, `runs tail` (through a
 * park, and through a proxy that cuts its connection), `interactions
 * list|approve|deny|answer`, `keys create|list|revoke`, an approval given by
 * sending `yes` (followed to the run's end), the exit codes of a run that
 * failed (3) or was cancelled (4), and the failures (the envelope's message
 * and code; usage mistakes).
 * A failed run (exit 3) and a refused one (exit 1) go through the bin as a
 * process (`node src/cli.mjs`): its exit code, stdout and stderr are the
 * process's own. Each test has a workspace (an API key) of its own.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer, Schema } from "effect"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { Agent } from "../../../domain/Agent.ts"
import { ApiKey } from "../../../domain/ApiKey.ts"
import { Page } from "../../../domain/Page.ts"
import { Run } from "../../../domain/Run.ts"
import { ToolServer } from "../../../domain/ToolServer.ts"
import { introduction } from "../../../src/model/ScriptedModel.ts"
import { cutProxy } from "../../support/CutProxy.ts"
import { gateServer } from "../../support/GateMcpServer.ts"
import * as InProcessCli from "../../support/InProcessCli.ts"
import * as ServiceProcess from "../../support/ServiceProcess.ts"
import { freePort } from "../../support/TestServer.ts"

const workspaces = ["agents", "send", "question", "approval", "message", "ends", "failures", "keys"] as const
type Workspace = (typeof workspaces)[number]
const keyOf = (w: Workspace) => `sk_cli_${w}`
/** Workspace `keys` has an admin key (it manages the organization's keys). */
const seedOf = (w: Workspace) => `${keyOf(w)}:org_cli:${w}${w === "keys" ? ":admin" : ""}`

const ApiKeyPage = Page(ApiKey)

class Service extends Context.Service<Service, { readonly url: string; readonly dir: string }>()("test/CliService") {}

const ServiceLive = Layer.effect(Service)(
  Effect.gen(function*() {
    const dir = yield* ServiceProcess.tempDataDir("svc-cli-")
    const service = yield* ServiceProcess.start({
      SVC_DATA_DIR: join(dir, "data"),
      SVC_QUIET: "1",
      SVC_ALLOW_PRIVATE_URLS: "1",
      SVC_API_KEYS: workspaces.map(seedOf).join(","),
      PORT: String(yield* freePort),
      SVC_RUNNER_PORT: String(yield* freePort)
    })
    return { url: service.url, dir }
  })
)

/** `agent-service ...args` as key `w`: exit code, stdout, stderr. */
const cli = (w: Workspace, args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.flatMap(Service, ({ url }) => InProcessCli.cli(args, { SVC_URL: url, SVC_API_KEY: keyOf(w), ...env }))

/** The same, through the bin as a process (`node src/cli.mjs ...args`). */
const bin = (w: Workspace, args: ReadonlyArray<string>) =>
  Effect.flatMap(Service, ({ url }) => ServiceProcess.run("src/cli.mjs", args, { SVC_URL: url, SVC_API_KEY: keyOf(w) }))

/** Asserts the exit code and returns stdout's lines. */
const ok = (result: { readonly code: number | null; readonly stdout: string; readonly stderr: string }) => {
  assert.strictEqual(result.code, 0, result.stderr)
  return result.stdout.split("\n").slice(0, -1)
}

/** A JSON file in the test's directory. */
const jsonFile = (name: string, body: unknown) =>
  Effect.map(Service, ({ dir }) => {
    const path = join(dir, name)
    writeFileSync(path, JSON.stringify(body))
    return path
  })

const get = <A>(w: Workspace, path: string, schema: Schema.Decoder<A>) =>
  Effect.flatMap(
    Service,
    ({ url }) =>
      Effect.map(ServiceProcess.request(url, "GET", path, keyOf(w)), (r) => ServiceProcess.decodeJson(schema, r.text))
  )

const runLine = (run: Run) => {
  const u = run.usage
  if (u === undefined) return `[run] ${run.id} ${run.status}`
  return `[run] ${run.id} ${run.status}: ${u.inputTokens} in / ${u.outputTokens} out tokens, ${u.costCents} cents, ${u.steps} step${
    u.steps === 1 ? "" : "s"
  }`
}

const runIdIn = (lines: ReadonlyArray<string>) => lines.find((l) => l.startsWith("[run] "))?.split(" ")[1] ?? ""

const ask = `/tool ask_question ${
  JSON.stringify({
    title: "Go on?",
    questions: [{ id: "go", prompt: "Go on?", options: [{ id: "yes", label: "Yes" }, { id: "no", label: "No" }] }]
  })
}\n/text resumed`

layer(ServiceLive, { timeout: 300_000, excludeTestServices: true })("cli against a service process", (it) => {
  it.effect(
    "agents list and create: one line per agent; a body from --file with flags over it; a bad field exits 2",
    () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(ok(yield* cli("agents", ["agents", "list"])), ["no agents"])
        const file = yield* jsonFile("agent.json", {
          context: "Ask first.\nThen act.",
          band: "core",
          metadata: { team: "docs" }
        })
        const [id] = ok(
          yield* cli("agents", ["agents", "create", "--file", file, "--band", "lite", "--metadata", "tier=gold"])
        )
        assert.match(id, /^agent_[0-9A-Za-z]{22}$/)
        const agent = yield* get("agents", `/v1/agents/${id}`, Agent)
        assert.strictEqual(agent.band, "lite")
        assert.deepStrictEqual(agent.metadata, { team: "docs", tier: "gold" })
        assert.deepStrictEqual(ok(yield* cli("agents", ["agents", "list"])), [
          `${id}  lite  ${agent.createdAt}  Ask first.`
        ])

        const bad = yield* cli("agents", ["agents", "create", "--band", "ultra"])
        assert.strictEqual(bad.code, 2)
        assert.strictEqual(bad.stdout, "")
        assert.strictEqual(
          bad.stderr,
          `error: Invalid agent: band: Expected "lite" | "core" | "frontier" (invalid_request)\n`
        )
      }),
    120_000
  )

  it.effect(
    "send: the answer as it streams, the run's final status and usage; progress as plain lines when stderr is a pipe",
    () =>
      Effect.gen(function*() {
        const [agentId] = ok(yield* cli("send", ["agents", "create", "--context", "Be brief."]))
        const first = yield* cli("send", ["send", "--agent", agentId, "hello there"])
        const lines = ok(first)
        const threadId = lines[0].replace("[thread] ", "")
        const run = yield* get("send", `/v1/runs/${runIdIn(lines)}`, Run)
        assert.strictEqual(run.status, "completed")
        // The thread's first answer opens with what the scripted model is; the next does not.
        assert.deepStrictEqual(lines, [`[thread] ${threadId}`, introduction, "", "Echo: hello there", runLine(run)])
        assert.strictEqual(first.stderr, "... creating a thread\n... sending\n... waiting for the model\n")

        const again = ok(yield* cli("send", ["send", threadId, "once more"]))
        assert.deepStrictEqual(again, [
          "Echo: once more",
          runLine(yield* get("send", `/v1/runs/${runIdIn(again)}`, Run))
        ])
      }),
    120_000
  )

  it.effect(
    "a question: send ends at the park with how to answer; runs tail follows through it; interactions list and answer",
    () =>
      Effect.gen(function*() {
        const file = yield* jsonFile("asking.json", { capabilities: { userInteraction: true } })
        const [agentId] = ok(yield* cli("question", ["agents", "create", "--file", file]))
        const sent = ok(yield* cli("question", ["send", "--agent", agentId, ask]))
        const runId = runIdIn(sent)
        const interactionId = sent.find((l) => l.startsWith("[question] "))?.slice(11, 37) ?? ""
        assert.match(interactionId, /^tar_[0-9A-Za-z]{22}$/)
        const parked = yield* get("question", `/v1/runs/${runId}`, Run)
        const asked = [
          `[tool] ask_question ${
            JSON.stringify({
              title: "Go on?",
              questions: [{
                id: "go",
                prompt: "Go on?",
                options: [{ id: "yes", label: "Yes" }, { id: "no", label: "No" }]
              }]
            })
          }`,
          `[question] ${interactionId}: Go on?`,
          "  go: Go on? (options: yes, no)",
          `  answer:  agent-service interactions answer ${interactionId} --text <answer> | --option <id>`
        ]
        assert.deepStrictEqual(sent.slice(1), [
          ...asked,
          runLine(parked),
          `  follow:  agent-service runs tail ${runId}`
        ])
        assert.strictEqual(parked.status, "waiting_for_input")

        assert.deepStrictEqual(ok(yield* cli("question", ["interactions", "list"])), [
          `${interactionId}  pending  question  ask_question  ${runId}  Go on?`
        ])
        const { url } = yield* Service
        const tail = yield* InProcessCli.launchCli(["runs", "tail", runId], {
          SVC_URL: url,
          SVC_API_KEY: keyOf("question")
        })
        // The tail has replayed the turn up to the park and waits for what comes next.
        yield* tail.waitForOutput((out) => out.includes("  answer:  "))
        assert.deepStrictEqual(
          ok(yield* cli("question", ["interactions", "answer", interactionId, "--option", "yes"])),
          [`${interactionId} resolved`]
        )
        const tailed = ok(yield* tail.finished)
        const done = yield* get("question", `/v1/runs/${runId}`, Run)
        assert.strictEqual(done.status, "completed")
        assert.deepStrictEqual(tailed, [
          ...asked,
          asked[0],
          `[result] ask_question {"inputResponses":[{"optionId":"yes","requestId":"go"}]}`,
          "resumed",
          runLine(done)
        ])
        assert.deepStrictEqual(ok(yield* cli("question", ["interactions", "list"])), ["no pending interactions"])
      }).pipe(Effect.scoped),
    120_000
  )

  it.effect(
    "approvals: deny with a reason, approve; runs tail through a proxy that cuts its connection goes on without repeating a line",
    () =>
      Effect.gen(function*() {
        const { url } = yield* Service
        const gate = yield* gateServer
        const created = yield* ServiceProcess.request(url, "POST", "/v1/tool-servers", keyOf("approval"), {
          name: "cligate",
          transport: "http",
          url: gate.url,
          approval: "always"
        })
        const server = ServiceProcess.decodeJson(ToolServer, created.text)
        const file = yield* jsonFile("gated.json", { capabilities: { mcp: { toolServerIds: [server.id] } } })
        const [agentId] = ok(yield* cli("approval", ["agents", "create", "--file", file]))
        const echo = (text: string) => `/tool mcp__cligate__echo ${JSON.stringify({ text })}`
        const asked = (interactionId: string, text: string) => [
          `[tool] mcp__cligate__echo {"text":"${text}"}`,
          `[approval] ${interactionId}: mcp__cligate__echo {"text":"${text}"}`,
          `  approve: agent-service interactions approve ${interactionId}`,
          `  deny:    agent-service interactions deny ${interactionId}`
        ]
        const parkedOn = (lines: ReadonlyArray<string>) =>
          lines.find((l) => l.startsWith("[approval] "))?.slice(11, 37) ?? ""

        const sent = ok(yield* cli("approval", ["send", "--agent", agentId, echo("one")]))
        const first = parkedOn(sent)
        const threadId = sent[0].replace("[thread] ", "")
        assert.deepStrictEqual(sent.slice(1, 5), asked(first, "one"))
        assert.deepStrictEqual(ok(yield* cli("approval", ["interactions", "deny", first, "--reason", "Not today."])), [
          `${first} resolved: deny`
        ])
        const denied = ok(yield* cli("approval", ["runs", "tail", runIdIn(sent)]))
        assert.deepStrictEqual(denied, [
          ...asked(first, "one"),
          `[tool] mcp__cligate__echo {"text":"one"}`,
          "[denied] mcp__cligate__echo: Not today.",
          "Result: Not today.",
          runLine(yield* get("approval", `/v1/runs/${runIdIn(sent)}`, Run))
        ])

        const again = ok(yield* cli("approval", ["send", threadId, echo("two")]))
        const second = parkedOn(again)
        const runId = runIdIn(again)
        const proxy = yield* cutProxy(url)
        const tail = yield* InProcessCli.launchCli(["runs", "tail", runId], {
          SVC_URL: proxy.url,
          SVC_API_KEY: keyOf("approval")
        })
        // The first request replayed the turn up to the park; the second waits after it: cut that one.
        yield* proxy.received(2)
        yield* proxy.cut
        yield* proxy.received(3)
        assert.deepStrictEqual(ok(yield* cli("approval", ["interactions", "approve", second])), [
          `${second} resolved: allow`
        ])
        const tailed = ok(yield* tail.finished)
        assert.deepStrictEqual(tailed, [
          ...asked(second, "two"),
          `[tool] mcp__cligate__echo {"text":"two"}`,
          `[result] mcp__cligate__echo [{"type":"text","text":"two"}]`,
          // The scripted model reads the result back (its answer leaves out the envelope of untrusted tool output).
          "Result: two",
          runLine(yield* get("approval", `/v1/runs/${runId}`, Run))
        ])
        const parkedAt = proxy.requests()[1].lastEventId
        assert.match(parkedAt ?? "", /^\d+$/)
        assert.deepStrictEqual(proxy.requests().map((r) => [r.method, r.path, r.lastEventId]), [
          ["GET", `/v1/runs/${runId}/stream`, undefined],
          ["GET", `/v1/runs/${runId}/stream`, parkedAt],
          ["GET", `/v1/runs/${runId}/stream`, parkedAt],
          ["GET", `/v1/runs/${runId}`, undefined]
        ])
      }).pipe(Effect.scoped),
    120_000
  )

  it.effect(
    "approving by message: `send <thread> yes` to a thread waiting for approval resolves it and follows the resumed run to its end",
    () =>
      Effect.gen(function*() {
        const { url } = yield* Service
        const gate = yield* gateServer
        const created = yield* ServiceProcess.request(url, "POST", "/v1/tool-servers", keyOf("message"), {
          name: "msggate",
          transport: "http",
          url: gate.url,
          approval: "always"
        })
        const server = ServiceProcess.decodeJson(ToolServer, created.text)
        const file = yield* jsonFile("msg-gated.json", { capabilities: { mcp: { toolServerIds: [server.id] } } })
        const [agentId] = ok(yield* cli("message", ["agents", "create", "--file", file]))
        const sent = ok(
          yield* cli("message", ["send", "--agent", agentId, "/tool mcp__msggate__echo {\"text\":\"three\"}"])
        )
        const threadId = sent[0].replace("[thread] ", "")
        const runId = runIdIn(sent)
        const interactionId = sent.find((l) => l.startsWith("[approval] "))?.slice(11, 37) ?? ""
        assert.match(interactionId, /^tar_[0-9A-Za-z]{22}$/)
        assert.strictEqual((yield* get("message", `/v1/runs/${runId}`, Run)).status, "waiting_for_approval")

        const yes = yield* cli("message", ["send", threadId, "yes"])
        assert.strictEqual(yes.code, 0, yes.stderr)
        assert.notInclude(yes.stderr, "error")
        const done = yield* get("message", `/v1/runs/${runId}`, Run)
        assert.strictEqual(done.status, "completed")
        // The answer as the thread's history has it: the lines after the call's result.
        const history = ok(yield* cli("message", ["threads", "history", threadId]))
        const answer = history.slice(history.findIndex((l) => l.startsWith("[result] ")) + 1)
        assert.isAbove(answer.length, 0)
        assert.deepStrictEqual(ok(yes), [
          `[resolved] ${interactionId}: allow`,
          `[tool] mcp__msggate__echo {"text":"three"}`,
          `[result] mcp__msggate__echo [{"type":"text","text":"three"}]`,
          ...answer,
          runLine(done)
        ])
        const json = ok(yield* cli("message", ["interactions", "get", interactionId, "--json"]))
        const resolved = JSON.parse(json.join("\n")) as { readonly status: string; readonly decision: string }
        assert.deepStrictEqual([resolved.status, resolved.decision], ["resolved", "allow"])
      }).pipe(Effect.scoped),
    600_000
  )

  it.effect(
    "exit codes of a followed run: 3 when it failed (send, runs tail, --json), 4 when it was cancelled",
    () =>
      Effect.gen(function*() {
        const [agentId] = ok(
          yield* cli("ends", ["agents", "create", "--data", "{\"capabilities\":{\"userInteraction\":true}}"])
        )
        const failed = yield* bin("ends", ["send", "--agent", agentId, "/fail"])
        assert.strictEqual(failed.code, 3, failed.stderr)
        const lines = failed.stdout.split("\n").slice(0, -1)
        const runId = runIdIn(lines)
        const run = yield* get("ends", `/v1/runs/${runId}`, Run)
        assert.strictEqual(run.status, "failed")
        assert.strictEqual(lines[lines.length - 1], `${runLine(run)} (${run.error?.message})`)
        assert.notInclude(failed.stderr, "error:")
        const tailed = yield* cli("ends", ["runs", "tail", runId])
        assert.strictEqual(tailed.code, 3)
        const asJson = yield* cli("ends", ["runs", "tail", runId, "--json"])
        assert.strictEqual(asJson.code, 3)
        const jsonLines = asJson.stdout.split("\n").slice(0, -1).map((l) => JSON.parse(l) as Record<string, unknown>)
        assert.deepStrictEqual(Object.keys(jsonLines[0]), ["id", "chunk"])
        assert.deepStrictEqual(jsonLines[jsonLines.length - 1], { run: JSON.parse(JSON.stringify(run)) })

        const parked = ok(yield* cli("ends", ["send", "--agent", agentId, ask]))
        const parkedRun = runIdIn(parked)
        const cancelled = ok(yield* cli("ends", ["runs", "cancel", parkedRun]))
        const afterCancel = yield* get("ends", `/v1/runs/${parkedRun}`, Run)
        assert.strictEqual(afterCancel.status, "cancelled")
        assert.match(cancelled[0] ?? "", new RegExp(`^${parkedRun}  cancelled  ${agentId}  thread_\\w+  \\S+`))
        const tailCancelled = yield* cli("ends", ["runs", "tail", parkedRun])
        assert.strictEqual(tailCancelled.code, 4, tailCancelled.stderr)
        assert.match(tailCancelled.stdout, new RegExp(`\\[run\\] ${parkedRun} cancelled`))
      }),
    600_000
  )

  it.effect(
    "keys create, list and revoke: the key alone on stdout, once; one line per key; a revoked key is refused",
    () =>
      Effect.gen(function*() {
        const made = yield* cli("keys", ["keys", "create", "--name", "ci deploys", "--workspace", "agents"])
        assert.strictEqual(made.code, 0, made.stderr)
        const [secret] = ok(made)
        assert.match(secret, /^sk_[0-9A-Za-z]{43}$/)
        const id = /^API key (key_[0-9A-Za-z]{22}) \(member, workspace agents\): shown only now, store it safely\n$/
          .exec(made.stderr)?.[1]
        assert.isString(id)
        // The new key is of workspace `agents`: it lists that workspace's agents.
        const asNewKey = yield* cli("keys", ["agents", "list"], { SVC_API_KEY: secret })
        assert.strictEqual(asNewKey.code, 0, asNewKey.stderr)

        const listed = ok(yield* cli("keys", ["keys", "list", "--limit", "1"]))
        const created = (yield* get("keys", "/v1/api-keys?limit=1", ApiKeyPage)).data[0]
        assert.isDefined(created)
        assert.deepStrictEqual(listed.slice(0, 1), [
          [
            id,
            secret.slice(0, 7),
            "agents",
            "member",
            created!.createdAt,
            created!.lastUsedAt ?? "never",
            "active",
            "ci deploys"
          ]
            .join("  ")
        ])
        assert.match(listed[1] ?? "", /^more: agent-service keys list --cursor \S+$/)

        const revoked = ok(yield* cli("keys", ["keys", "revoke", id!]))
        assert.strictEqual(revoked.length, 1)
        assert.match(
          revoked[0] ?? "",
          new RegExp(`^${id}  sk_[0-9A-Za-z]{4}  agents  member  \\S+  \\S+  revoked \\S+  ci deploys$`)
        )
        const refused = yield* cli("keys", ["agents", "list"], { SVC_API_KEY: secret })
        assert.strictEqual(refused.code, 1)
        assert.match(refused.stderr, /\(invalid_api_key, HTTP 401, request req_[0-9A-Za-z]{22}\)\n$/)

        const member = yield* cli("agents", ["keys", "list"])
        assert.strictEqual(member.code, 1)
        assert.match(member.stderr, /^error: .+ \(permission_denied, HTTP 403, request req_[0-9A-Za-z]{22}\)\n$/)
        const badId = yield* cli("keys", ["keys", "revoke", "agent_x"])
        assert.strictEqual(badId.code, 2)
        assert.match(badId.stderr, /^error: Invalid API key id: must be an id starting with 'key_'/)
        const badRole = yield* cli("keys", ["keys", "create", "--name", "x", "--role", "owner"])
        assert.strictEqual(badRole.code, 2)
      }),
    120_000
  )

  it.effect(
    "failures: the envelope's message and code on stderr with exit 1; usage mistakes exit 2",
    () =>
      Effect.gen(function*() {
        const { url } = yield* Service
        const requestId = "req_[0-9A-Za-z]{22}"
        const missing = yield* bin("failures", ["runs", "tail", "run_doesnotexist"])
        assert.strictEqual(missing.code, 1)
        assert.match(
          missing.stderr,
          new RegExp(
            `^error: No run with id 'run_doesnotexist'\\. \\(run_not_found, HTTP 404, request ${requestId}\\)\\n$`
          )
        )
        const wrongKey = yield* cli("failures", ["interactions", "list"], { SVC_API_KEY: "sk_not_a_key" })
        assert.strictEqual(wrongKey.code, 1)
        assert.match(
          wrongKey.stderr,
          new RegExp(`^error: .+ \\(invalid_api_key, HTTP 401, request ${requestId}\\)\\n$`)
        )
        const port = yield* freePort
        const unreachable = yield* cli("failures", ["agents", "list", "--url", `http://127.0.0.1:${port}`])
        assert.strictEqual(unreachable.code, 1)
        assert.match(
          unreachable.stderr,
          /^error: Transport error \(GET http:\/\/127\.0\.0\.1:\d+\/v1\/agents\): connect ECONNREFUSED 127\.0\.0\.1:\d+ \(connection\)\n$/
        )

        const noKey = yield* InProcessCli.cli(["agents", "list"], { SVC_URL: url })
        assert.deepStrictEqual([noKey.code, noKey.stderr], [
          2,
          "error: no API key: pass --api-key or set SVC_API_KEY (the development key the service printed at its first " +
          "start, a key of SVC_API_KEYS, or one an admin made with `agent-service keys create`)\n"
        ])
        const oneArgument = yield* cli("failures", ["send", "thread_x"])
        assert.deepStrictEqual([oneArgument.code, oneArgument.stderr], [
          2,
          "error: give a thread id and a message, or --agent <agent id> and a message\n"
        ])
        const badId = yield* cli("failures", ["runs", "tail", "nope"])
        assert.strictEqual(badId.code, 2)
        assert.match(
          badId.stderr,
          /^error: Invalid run id: must be an id starting with 'run_' followed by letters and digits \(invalid_request\)\n$/
        )
        const unknown = yield* cli("failures", ["agents", "remove"])
        assert.strictEqual(unknown.code, 2)
        assert.match(unknown.stderr, /Unknown subcommand "remove"/)
      }),
    120_000
  )
})
