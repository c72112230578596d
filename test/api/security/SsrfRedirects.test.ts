/**
 * Redirects to forbidden addresses are refused at request time (issue 15),
 * with private URLs not allowed. The registered URL is on an origin the
 * operator trusts (SVC_TRUSTED_ORIGINS: a local server, so the first hop
 * really happens); it redirects to each form of a loopback, private or
 * metadata address, one of them a local server that must never be reached.
 * Every request-time path of the guarded client is driven: a tool server's
 * test, an HTTP connection's spec test and tool call, a hook's test, a
 * result handler's dispatch.
 */
import { assert } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { ResultDispatch } from "../../../src/resultHandlers/ResultDispatch.ts"
import * as Collection from "../../support/Collection.ts"
import { agentWithThread, failureTextsOf, send } from "../../support/Conversation.ts"
import { DnsServer } from "../../support/DnsServer.ts"
import { listen } from "../../support/HttpPeer.ts"
import { requestFor } from "../../support/ResultHandlerDeliveries.ts"
import * as TestServer from "../../support/TestServer.ts"
import { records } from "./UrlCorpus.ts"

/** Where the trusted origin redirects to, `victim` standing for the port of the server that must not be reached. */
const targets = (victim: number): ReadonlyArray<string> => [
  `http://127.0.0.1:${victim}/x`,
  `//127.0.0.1:${victim}/x`,
  `https://127.0.0.1:${victim}/x`,
  `https://2130706433:${victim}/x`,
  `https://0x7f.1:${victim}/x`,
  `https://[::ffff:127.0.0.1]:${victim}/x`,
  `https://[::1]:${victim}/x`,
  `https://0.0.0.0:${victim}/x`,
  `https://localhost:${victim}/x`,
  `https://LOCALHOST.:${victim}/x`,
  `https://１２７.０.０.１:${victim}/x`,
  `https://loop.example.com:${victim}/x`,
  `https://evil.example.com/x`,
  `https://six.example.com/x`,
  `https://169.254.169.254/latest/meta-data`,
  `https://user:pass@127.0.0.1:${victim}/x`,
  "file:///etc/passwd"
]

const refusal = /loopback, private|must use https|must not carry credentials|fully qualified hostname|resolves to/

class Peers extends Context.Service<Peers, {
  readonly origin: string
  readonly targets: ReadonlyArray<string>
  /** Requests the trusted origin answered with a redirect. */
  readonly redirects: () => number
  /** Requests that reached the server behind the forbidden addresses. */
  readonly victimHits: () => number
}>()("test/SsrfRedirectPeers") {}

const Harness = Layer.unwrap(
  Effect.gen(function*() {
    const dns = yield* DnsServer
    let victimHits = 0
    const victim = yield* listen((_req, res) => {
      victimHits++
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ decision: "allow" }))
    })
    const forms = targets(victim)
    let redirects = 0
    const port = yield* listen((req: IncomingMessage, res: ServerResponse) => {
      const index = /^\/r\/(\d+)/.exec(req.url ?? "")?.[1]
      if (req.url === "/ok") {
        return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ decision: "allow" }))
      }
      if (req.url === "/hop") return res.writeHead(302, { location: "/ok" }).end()
      if (index === undefined) return res.writeHead(404).end()
      redirects++
      // 307 keeps the method and body: an MCP POST is redirected as a POST.
      // A header is Latin-1: the full-width form goes percent-encoded, which a URL parser decodes.
      res.writeHead(307, { location: forms[Number(index)].replace(/[^\x20-\x7e]/g, encodeURIComponent) }).end()
    })
    const origin = `http://127.0.0.1:${port}`
    return Layer.merge(
      TestServer.layer({ allowPrivateUrls: false, dnsServers: [dns.address], trustedOrigins: [origin] }),
      Layer.succeed(Peers)({ origin, targets: forms, redirects: () => redirects, victimHits: () => victimHits })
    )
  })
).pipe(Layer.provideMerge(DnsServer.layer(records)))

const pingSpec = JSON.stringify({
  openapi: "3.0.3",
  info: { title: "t", version: "1" },
  paths: { "/ping": { get: { operationId: "ping", responses: { "200": { description: "OK" } } } } }
})

/** Runs `drive` once per target (the URL redirecting to it), asserting it was redirected and refused. */
const eachTarget = (
  what: string,
  drive: (url: string, target: string) => Effect.Effect<string, never, TestServer.TestApi | ResultDispatch>
) =>
  Effect.gen(function*() {
    const peers = yield* Peers
    for (const [index, target] of peers.targets.entries()) {
      const before = peers.redirects()
      const message = yield* drive(`${peers.origin}/r/${index}`, target)
      const context = `${what} redirected to ${target}: ${message}`
      assert.strictEqual(peers.redirects(), before + 1, `${context}: the trusted origin answered with the redirect`)
      assert.match(message, refusal, context)
    }
    assert.strictEqual(peers.victimHits(), 0, `${what}: no request reached the forbidden address`)
  })

const failedWith = (reply: TestServer.Reply) =>
  Effect.map(TestServer.expectError(reply, 502, "api_error", "service_unavailable"), (error) => error.message)

TestServer.suiteWith(Harness)("SSRF redirects at request time", (it) => {
  it.effect("a redirect within the trusted origin is followed (the control)", () =>
    Effect.gen(function*() {
      const peers = yield* Peers
      const hook = yield* Collection.toolApprovalHooks.create({
        name: "hook",
        url: `${peers.origin}/hop`,
        secret: "whsec_redirects_signing_secret"
      })
      const reply = yield* TestServer.request("POST", `/v1/tool-approval-hooks/${hook.id}/test`)
      assert.strictEqual(reply.status, 200, reply.text)
      assert.strictEqual((reply.json as { readonly decision?: string }).decision, "allow")
    }))

  it.effect("a tool approval hook's test", () =>
    eachTarget("hook test", (url) =>
      Effect.gen(function*() {
        const hook = yield* Collection.toolApprovalHooks.create({
          name: "hook",
          url,
          secret: "whsec_redirects_signing_secret"
        })
        return yield* failedWith(yield* TestServer.request("POST", `/v1/tool-approval-hooks/${hook.id}/test`))
      })))

  it.effect("a tool server's test (the MCP handshake)", () =>
    eachTarget("tool server test", (url) =>
      Effect.gen(function*() {
        const server = yield* Collection.toolServers.create({
          name: Collection.uniqueName("ts"),
          transport: "http",
          url
        })
        return yield* failedWith(yield* TestServer.request("POST", `/v1/tool-servers/${server.id}/test`))
      })))

  it.effect("an HTTP connection's spec, loaded by its test", () =>
    eachTarget("spec test", (url) =>
      Effect.gen(function*() {
        const connection = yield* Collection.httpConnections.create({ name: Collection.uniqueName("hc"), spec: url })
        return yield* failedWith(yield* TestServer.request("POST", `/v1/http-connections/${connection.id}/test`))
      })))

  it.effect("an HTTP connection's tool call to its baseUrl", () =>
    eachTarget("HTTP tool call", (url) =>
      Effect.gen(function*() {
        const connection = yield* Collection.httpConnections.create({
          name: Collection.uniqueName("hc"),
          spec: pingSpec,
          baseUrl: url
        })
        const { thread } = yield* agentWithThread({ capabilities: { http: { connectionIds: [connection.id] } } })
        const { parsed } = yield* send(thread.id, `/tool api__${connection.name}__ping {}`)
        const errors = failureTextsOf(parsed.chunks)
        assert.strictEqual(errors.length, 1, JSON.stringify(parsed.chunks))
        return errors[0]
      })))

  it.effect("a result handler's dispatch", () =>
    eachTarget("result handler dispatch", (url) =>
      Effect.gen(function*() {
        const handler = yield* Collection.resultHandlers.create({
          kind: "artifact",
          name: Collection.uniqueName("rh"),
          url,
          secret: "rh_redirects_signing_secret"
        })
        const result = yield* Effect.result((yield* ResultDispatch).dispatch(yield* requestFor(handler.id)))
        return result._tag === "Failure"
          ? result.failure.message
          : assert.fail(`dispatched: ${JSON.stringify(result.success)}`)
      })))
})
