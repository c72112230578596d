/**
 * A sandbox with a network reaches out only through the service's egress
 * proxy (EgressProxy.ts): its unix socket is bound in and bridged to
 * 127.0.0.1:3128 inside, the sandbox has HTTP(S)_PROXY set, and the proxy
 * applies the workspace's network policy. A restricted workspace reaches a
 * listed host (plain HTTP and a CONNECT tunnel) and gets 403 for any other;
 * going around the proxy finds no route. An offline workspace has neither
 * the socket nor the proxy variables.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Layer } from "effect"
import { Effect } from "effect"
import { createServer } from "node:http"
import { Sandbox } from "../../../src/workspace/Sandbox.ts"
import { DnsServer } from "../../support/DnsServer.ts"
import { proxiedWorkspace, sandboxLayer, testLimits } from "../../support/TestSandbox.ts"

/** A destination on the host's loopback answering `hello <path>`. */
const destination = Effect.acquireRelease(
  Effect.callback<{ readonly port: number; readonly close: () => void }>((resume) => {
    const server = createServer((req, res) => {
      res.writeHead(200, { "content-type": "text/plain" })
      res.end(`hello ${req.url ?? ""}`)
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      resume(
        Effect.succeed({
          port: typeof address === "object" && address !== null ? address.port : 0,
          close: () => server.close()
        })
      )
    })
  }),
  (d) => Effect.sync(d.close)
)

describe("sandbox network", () => {
  // Live services: real processes, real sockets.
  layer(Layer.merge(sandboxLayer, DnsServer.layer({ "allowed.test": "127.0.0.1", "other.test": "127.0.0.1" })), {
    excludeTestServices: true
  })((it) => {
    it.effect("restricted: the listed host is reached through the proxy (HTTP and CONNECT), another gets 403, no way around it", () =>
      Effect.gen(function*() {
        const target = yield* destination
        const { sandbox, workspace: ws } = yield* proxiedWorkspace("ws_restricted", {
          network: { mode: "restricted", allowDomains: ["allowed.test"] },
          allowPrivate: true,
          serviceHosts: []
        }, testLimits)
        const url = (host: string, path: string) => `http://${host}:${target.port}${path}`
        const result = yield* sandbox.exec(ws, {
          command: [
            `curl -sS ${url("allowed.test", "/plain")}; echo`,
            `curl -sS --proxytunnel ${url("allowed.test", "/tunnel")}; echo`,
            `curl -sS -o /dev/null -w '%{http_code}\\n' ${url("other.test", "/")}`,
            `curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:${target.port}/direct || echo no route`
          ].join("; ")
        })
        assert.strictEqual(result.stdout, "hello /plain\nhello /tunnel\n403\nno route\n")
      }))

    it.effect("offline: no proxy socket, no proxy variables, no route", () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox
        const target = yield* destination
        const ws = yield* sandbox.open("ws_offline", testLimits)
        const result = yield* sandbox.exec(ws, {
          command:
            `ls /run/svc-egress.sock 2>&1; env | grep -ic proxy; curl -sS --max-time 5 http://127.0.0.1:${target.port}/ || echo no route`
        })
        assert.match(result.stdout, /No such file or directory\n0\nno route\n$/)
      }))

    it.effect("a workspace asking for the proxy before it listens cannot open", () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox
        const error = yield* Effect.flip(sandbox.open("ws_no_proxy", testLimits, { network: "proxy" }))
        assert.strictEqual(error.code, "workspace_unavailable")
        assert.match(
          error.message,
          /the egress proxy of workspace ws_no_proxy is not listening at .*ws_no_proxy\.sock$/
        )
      }))
  })
})
