/**
 * The turns of the secret-leak scan (issue 15): secrets with recognizable
 * values used through every binding (a tool server's bearer, each place an
 * HTTP connection puts its credential, a managed workspace's environment, a
 * hook's and a result handler's signing secret), in turns that fail every way
 * they can: an upstream echoing the credential in a result, an error result,
 * a thrown error, a 401 and a 500; a server down; timeouts; a model error; a
 * cancel; an approval denied by the hook and by a person; a command printing
 * its environment, failing, timing out.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import * as Collection from "../../support/Collection.ts"
import {
  agentWithThread,
  bashStep,
  failuresOf,
  getRun,
  send,
  startRun,
  streamOf,
  successesOf,
  toolStep
} from "../../support/Conversation.ts"
import { HookServer, reply } from "../../support/HookServer.ts"
import {
  type EchoApi,
  type EchoMcp,
  operations,
  type Placement,
  placements,
  specFor
} from "../../support/LeakyUpstreams.ts"
import * as TestServer from "../../support/TestServer.ts"

/** A recognizable value (with characters that change when percent-encoded), unique to `label`. */
const leakValue = (label: string) => `LEAK_${label}_${randomBytes(9).toString("hex")}/+=`

export const secretValues = () => {
  const placementValues = Object.fromEntries(Object.keys(placements).map((p) => [`http_${p}`, leakValue(`http_${p}`)]))
  return {
    mcp: leakValue("mcp"),
    mcp_wrong: leakValue("mcp_wrong"),
    mcp_down: leakValue("mcp_down"),
    rotated_away: leakValue("rotated_away"),
    env: leakValue("env"),
    env_pem: `-----BEGIN LEAK KEY-----\n${leakValue("pem_line1")}\n${leakValue("pem_line2")}\n-----END LEAK KEY-----`,
    hook: `whsec_${leakValue("hook")}`,
    handler: `whsec_${leakValue("handler")}`,
    ...placementValues
  } as Readonly<Record<string, string>>
}

const createSecret = (name: string, value: string) =>
  Collection.secrets.create({ name: Collection.uniqueName(name), value })

const expectStatus = (reply: TestServer.Reply, status: number, what: string) =>
  assert.strictEqual(reply.status, status, `${what}: ${reply.text}`)

type Chunk = { readonly type: string } & Record<string, unknown>

/**
 * The texts of a stream's `kind`: the calls' results or their expected failures (each output as
 * JSON, both `tool-output-available`), or its `error` chunks' texts.
 */
const textsOf = (chunks: ReadonlyArray<Chunk>, kind: "result" | "failure" | "error"): ReadonlyArray<string> =>
  kind === "error"
    ? chunks.flatMap((c) => (c.type === "error" && typeof c["errorText"] === "string" ? [c["errorText"]] : []))
    : (kind === "result" ? successesOf(chunks) : failuresOf(chunks).map(({ error }) => ({ error }))).map((o) =>
      JSON.stringify(o)
    )

/** Asserts the turn failed as meant: `expected` (in order) are the texts of its `kind`, each matching. */
const expectTexts = (
  chunks: ReadonlyArray<Chunk>,
  kind: "result" | "failure" | "error",
  expected: ReadonlyArray<RegExp>,
  what: string
) => {
  const texts = textsOf(chunks, kind)
  assert.strictEqual(texts.length, expected.length, `${what}: ${JSON.stringify(texts)}`)
  expected.forEach((pattern, i) => assert.match(texts[i], pattern, what))
}

/** Tool servers bound to the right, a wrong and an unreachable server's token; their tests; turns through them. */
export const toolServerTurns = (values: Readonly<Record<string, string>>, mcp: EchoMcp, deadUrl: string) =>
  Effect.gen(function*() {
    const server = (name: string, url: string, secret: string, extra: Record<string, unknown> = {}) =>
      Effect.flatMap(
        createSecret(name, secret),
        (s) =>
          Collection.toolServers.create({
            name: Collection.uniqueName(name),
            transport: "http",
            url,
            auth: { type: "bearer", secretId: s.id },
            ...extra
          })
      )
    const good = yield* server("echo", mcp.url, values.mcp)
    const slow = yield* server("slow", mcp.url, values.mcp, { requestTimeoutMs: 300 })
    const wrong = yield* server("wrong", mcp.url, values.mcp_wrong)
    const down = yield* server("down", deadUrl, values.mcp_down)
    expectStatus(yield* Collection.toolServers.action(good.id, "test"), 200, "test of the good server")
    expectStatus(yield* Collection.toolServers.action(wrong.id, "test"), 502, "test with a wrong token")
    expectStatus(yield* Collection.toolServers.action(down.id, "test"), 502, "test of a server that is down")

    const { thread } = yield* agentWithThread({
      capabilities: { mcp: { toolServerIds: [good.id, slow.id, wrong.id, down.id] } }
    })
    const call = (s: { readonly name: string }, tool: string) => toolStep(`mcp__${s.name}__${tool}`, {})
    // Echoed in a result, an error result and a thrown error; then the model fails.
    const echoed = yield* send(
      thread.id,
      [call(good, "whoami"), call(good, "refuse"), call(good, "crash"), "/fail"].join("\n")
    )
    expectTexts(
      echoed.parsed.chunks,
      "result",
      [/you sent authorization: Bearer \*\*\*/],
      "an echoed result"
    )
    expectTexts(echoed.parsed.chunks, "failure", [
      /credential Bearer \*\*\* is not allowed/,
      /crashed while checking Bearer \*\*\*/
    ], "echoed errors")
    expectTexts(echoed.parsed.chunks, "error", [
      new RegExp(`'${wrong.name}' is unavailable.*rejected credential: Bearer \\*\\*\\*`),
      new RegExp(`'${down.name}' is unavailable`),
      /scripted model was told to fail/
    ], "the servers that cannot be used, then the model's failure")
    assert.strictEqual((yield* getRun(echoed.runId)).status, "failed")
    // Cancelled while the tool runs.
    const receipt = yield* startRun(thread.id, { input: call(good, "wait") })
    yield* mcp.waiting
    expectStatus(yield* TestServer.request("POST", `/v1/runs/${receipt.runId}/cancel`), 200, "cancel")
    yield* streamOf(receipt.runId)
    assert.strictEqual((yield* getRun(receipt.runId)).status, "cancelled")
    // Timed out.
    const timedOut = yield* send(thread.id, call(slow, "wait"))
    expectTexts(
      timedOut.parsed.chunks,
      "failure",
      [/timed out|no result within 300 ms/],
      "a call that timed out"
    )
    yield* mcp.release
    // Denied by the hook, then paused by it and denied by a person.
    const hooks = yield* HookServer
    const hook = yield* Collection.toolApprovalHooks.create({
      name: "reviewer",
      url: `${hooks.origin}/review`,
      secret: values.hook
    })
    const reviewed = yield* agentWithThread({
      capabilities: { mcp: { toolServerIds: [good.id] } },
      approvals: { toolExecution: { hookId: hook.id } }
    })
    yield* hooks.answerWith(reply(200, { decision: "deny", reason: "no" }))
    const denied = yield* send(reviewed.thread.id, call(good, "whoami"))
    assert.isTrue(denied.parsed.chunks.some((c) => c.type === "tool-output-denied"), "denied by the hook")
    yield* hooks.answerWith(reply(200, { decision: "pause", reason: "ask a person" }))
    const paused = yield* send(reviewed.thread.id, call(good, "whoami"))
    const pending = yield* TestServer.request("GET", `/v1/interactions?runId=${paused.runId}&status=pending`)
    const [interaction] = (pending.json as { readonly data: ReadonlyArray<{ readonly id: string }> }).data
    expectStatus(
      yield* TestServer.request("POST", `/v1/interactions/${interaction.id}/resolve`, {
        body: { inputResponses: [{ requestId: interaction.id, optionId: "deny" }], reason: "not today" }
      }),
      200,
      "deny"
    )
    const resolved = yield* streamOf(paused.runId)
    assert.isTrue(resolved.chunks.some((c) => c.type === "tool-output-denied"), "denied by a person")
    expectStatus(yield* Collection.toolApprovalHooks.action(hook.id, "test"), 200, "hook test")
  })

/** HTTP connections with the credential in each place, their tests, and a turn calling every operation of each. */
export const httpConnectionTurns = (values: Readonly<Record<string, string>>, api: EchoApi) =>
  Effect.gen(function*() {
    const connections = []
    for (const placement of Object.keys(placements) as ReadonlyArray<Placement>) {
      // The bearer's secret held another value first: rotated away, it must not surface either.
      const secret = yield* createSecret(
        placement,
        placement === "bearer" ? values.rotated_away : values[`http_${placement}`]
      )
      if (placement === "bearer") {
        expectStatus(
          yield* Collection.secrets.action(secret.id, "rotate", { value: values.http_bearer }),
          200,
          "rotate"
        )
      }
      const connection = yield* Collection.httpConnections.create({
        name: Collection.uniqueName(placement),
        spec: specFor(placement),
        baseUrl: `${api.origin}/${placement}`,
        auth: { type: "bearer", secretId: secret.id },
        requestTimeoutMs: 300
      })
      expectStatus(yield* Collection.httpConnections.action(connection.id, "test"), 200, `test of ${placement}`)
      connections.push(connection)
    }
    const { thread } = yield* agentWithThread({
      capabilities: { http: { connectionIds: connections.map((c) => c.id) } }
    })
    for (const [index, connection] of connections.entries()) {
      const { parsed } = yield* send(
        thread.id,
        operations.map((op) => toolStep(`api__${connection.name}__${op}`, {})).join("\n")
      )
      yield* api.hanging(index + 1)
      // echo (200) is a result, deny (401) and boom (500) failures, each quoting the request, masked; hang times out.
      expectTexts(parsed.chunks, "result", [/"status":200.*\*\*\*/], connection.name)
      expectTexts(parsed.chunks, "failure", [
        /"status":401.*\*\*\*/,
        /"status":500.*\*\*\*/,
        /no response within 300 ms/
      ], connection.name)
    }
  })

/** A workspace with the secrets in its environment: commands printing them, failing, timing out. */
export const workspaceTurns = (values: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    const env = yield* createSecret("env", values.env)
    const pem = yield* createSecret("pem", values.env_pem)
    const context = yield* Collection.secretContexts.create({
      name: Collection.uniqueName("leaks"),
      projections: [
        { type: "workspace_env", secretId: env.id, env: "LEAK_TOKEN" },
        { type: "workspace_env", secretId: pem.id, env: "LEAK_PEM" }
      ]
    })
    const { thread } = yield* agentWithThread({
      workspace: { type: "managed", shell: true, network: { mode: "offline" }, secretContexts: [context.id] }
    })
    const turns = [
      bashStep("echo \"$LEAK_TOKEN\"; printenv LEAK_PEM >&2; env | grep -a LEAK_; echo \"$LEAK_PEM\" | grep -n LEAK"),
      bashStep("echo \"token=$LEAK_TOKEN\" >&2; exit 3"),
      toolStep("bash", { command: "echo \"$LEAK_TOKEN\"; sleep 5", timeoutMs: 500 }),
      `${bashStep("echo \"$LEAK_TOKEN\"")}\n/fail`
    ]
    const chunks = []
    for (const input of turns) chunks.push((yield* send(thread.id, input)).parsed.chunks)
    expectTexts(
      chunks[0],
      "result",
      [/"stdout":"\*\*\*\\nLEAK_TOKEN=\*\*\*\\nLEAK_PEM=\*\*\*/],
      "the environment printed, masked"
    )
    expectTexts(chunks[1], "result", [/"exitCode":3.*"stderr":"token=\*\*\*/], "a failing command")
    expectTexts(
      chunks[2],
      "failure",
      [/wall time of 500 ms[\s\S]*"stdout":"\*\*\*/],
      "a command that timed out"
    )
    expectTexts(chunks[3], "error", [/scripted model was told to fail/], "the model failing after the command")
  })

/** A result handler signing with a secret. */
export const resultHandler = (values: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    const hooks = yield* HookServer
    yield* Collection.resultHandlers.create({
      kind: "artifact",
      name: "archive",
      url: `${hooks.origin}/handlers`,
      secret: values.handler
    })
  })

/** Reads back everything the API shows: every collection, each resource, each run and its replayed stream, interactions. */
export const readEverything = Effect.gen(function*() {
  const listed = (path: string) =>
    Effect.map(
      TestServer.request("GET", `${path}?limit=100`),
      (r) => (r.json as { readonly data?: ReadonlyArray<{ readonly id: string }> }).data ?? []
    )
  for (
    const path of [
      "/v1/secrets",
      "/v1/secret-contexts",
      "/v1/tool-servers",
      "/v1/http-connections",
      "/v1/tool-approval-hooks",
      "/v1/result-handlers",
      "/v1/agents",
      "/v1/threads"
    ]
  ) {
    for (const { id } of yield* listed(path)) yield* TestServer.request("GET", `${path}/${id}`)
  }
  for (const { id } of yield* listed("/v1/runs")) {
    yield* TestServer.request("GET", `/v1/runs/${id}`)
    yield* TestServer.request("GET", `/v1/runs/${id}/stream`)
  }
  for (const { id } of yield* listed("/v1/interactions")) yield* TestServer.request("GET", `/v1/interactions/${id}`)
})
