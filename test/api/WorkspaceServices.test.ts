/**
 * Declared services and previews of managed workspaces, through the whole
 * service on the real sandbox: a service runs in the workspace and commands
 * reach its port; the thread shows signed, expiring preview URLs, on the
 * previews' own listener and origin (the API's listener answers 404 there),
 * that proxy HTTP to it without an API key; forged and expired URLs are 403
 * before the workspace sees anything; a port with no service is 502;
 * restartPolicy; a workspace cannot turn a port into a link to a host socket.
 */
import { assert, layer } from "@effect/vitest"
import { Clock, Context, Effect, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"
import { readFileSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Thread } from "../../domain/Thread.ts"
import { RunRecovery } from "../../src/runs/RunRecovery.ts"
import { PreviewOrigin } from "../../src/workspace/PreviewOrigin.ts"
import { WorkspaceServices } from "../../src/workspace/WorkspaceServices.ts"
import { agentWithThread, bashStep, getThread, outputsOf, send, toolStep } from "../support/Conversation.ts"
import { DnsServer } from "../support/DnsServer.ts"
import * as TestServer from "../support/TestServer.ts"

class ApiPort extends Context.Service<ApiPort, number>()("test/ServicesApiPort") {}

const offline = { type: "managed", network: { mode: "offline" } } as const
const hourMs = 60 * 60 * 1000

const logOf = (threadId: string, name: string) =>
  Effect.sync(() =>
    readFileSync(join(TestServer.testWorkspaceRoot, "workspaces", threadId, ".svc", "logs", `${name}.log`), "utf8")
  )
/** The preview of `port` on the thread, as a path on the previews' listener. */
const previewPath = (thread: Thread, port: number) => {
  const preview = thread.workspace?.previews?.find((p) => p.port === port)
  assert.isDefined(preview)
  return new URL(preview?.url ?? "").pathname
}
/** The previews' listener as the test reaches it: its origin names svc.test (SVC_PUBLIC_URL's host), on 127.0.0.1. */
const previewListener = Effect.gen(function*() {
  const url = new URL(yield* (yield* PreviewOrigin).current)
  url.hostname = "127.0.0.1"
  return url.origin
})
/** A request without an API key (the preview URL is the grant) to the previews' listener. */
const anonymous = (method: string, path: string, options: TestServer.RequestOptions = {}) =>
  Effect.flatMap(
    previewListener,
    (origin) => TestServer.client(origin).request(method, path, { ...options, key: null })
  )

TestServer.suite()("workspace services and previews", (it) => {
  it.effect("services are refused with a duplicate name or port, port 3128, or in a workspace that never opens (400 naming the field)", () =>
    Effect.gen(function*() {
      const web = { name: "web", command: "true", port: 8000 }
      for (
        const [services, extra, field] of [
          [[web, { ...web, port: 8001 }], {}, "workspace.services[1].name"],
          [[web, { ...web, name: "api" }], {}, "workspace.services[1].port"],
          [[{ ...web, port: 3128 }], {}, "workspace.services[0].port"],
          [[web], { filesystem: false, shell: false }, "workspace.filesystem"]
        ] as const
      ) {
        const reply = yield* TestServer.request("POST", "/v1/agents", {
          body: { workspace: { type: "managed", ...extra, services } }
        })
        const error = yield* TestServer.expectError(reply, 400, "invalid_request_error", "invalid_request_error")
        assert.strictEqual(error.details?.["field"], field)
      }
    }))

  it.effect("a service runs in the sandbox, commands reach its port, and preview URLs proxy to it until they expire", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({
        workspace: {
          ...offline,
          services: [{ name: "web", command: "python3 -m http.server 8000 --bind 127.0.0.1", port: 8000 }],
          previews: { enabled: true, ports: [8000, 8001] },
          // Not hibernated (which stops its services) while the clock moves past the URL's expiry.
          lifecycle: { idleMinutes: 600 }
        }
      })
      // Not active yet: no URL to show.
      assert.deepStrictEqual((yield* getThread(thread.id)).workspace, { status: "uninitialized", previews: [] })
      const { parsed } = yield* send(
        thread.id,
        [
          toolStep("write_file", { path: "hello.txt", content: "hello from the workspace\n" }),
          bashStep("curl -s localhost:8000/hello.txt")
        ].join("\n")
      )
      assert.deepStrictEqual(outputsOf(parsed.chunks)[1], {
        exitCode: 0,
        stdout: "hello from the workspace\n",
        stderr: ""
      })

      const active = yield* getThread(thread.id)
      const now = yield* Clock.currentTimeMillis
      const expiresAt = new Date((Math.floor(now / hourMs) + 2) * hourMs).toISOString()
      assert.deepStrictEqual(active.workspace?.previews?.map((p) => ({ port: p.port, expiresAt: p.expiresAt })), [
        { port: 8000, expiresAt },
        { port: 8001, expiresAt }
      ])
      // On the previews' origin: SVC_PUBLIC_URL's host on the previews' port, never the API's.
      const api = yield* TestServer.TestApi
      const previewOrigin = yield* (yield* PreviewOrigin).current
      const previewPort = Number(new URL(previewOrigin).port)
      assert.match(previewOrigin, /^http:\/\/svc\.test:\d+$/)
      assert.notStrictEqual(previewPort, Number(new URL(api.url).port))
      for (const preview of active.workspace?.previews ?? []) {
        const url = new RegExp(`^http://svc\\.test:${previewPort}/v1/previews/thread_\\w+\\.\\d+\\.\\d+\\.[\\w-]{43}/$`)
        assert.match(preview.url, url)
      }
      // Every read within the hour shows the same URL.
      assert.deepStrictEqual((yield* getThread(thread.id)).workspace?.previews, active.workspace?.previews)

      const path = previewPath(active, 8000)
      const page = yield* anonymous("GET", `${path}hello.txt`)
      assert.strictEqual(page.status, 200)
      assert.strictEqual(page.text, "hello from the workspace\n")
      assert.match(page.headers.get("x-request-id") ?? "", TestServer.requestIdShape)
      // Without the trailing slash: redirected (308) below the token, where relative links resolve.
      const bare = yield* anonymous("GET", path.slice(0, -1))
      assert.strictEqual(bare.status, 200)
      assert.include(bare.text, "<a href=\"hello.txt\">hello.txt</a>")

      // The API's listener serves no preview: 404, no redirect, nothing reaches the service.
      for (const onApi of [`${path}hello.txt`, path, path.slice(0, -1), "/v1/previews/"]) {
        const error = yield* TestServer.expectError(
          yield* TestServer.request("GET", onApi, { key: null, redirect: "manual" }),
          404,
          "not_found",
          "route_not_found"
        )
        assert.strictEqual(
          error.message,
          "Previews are not served on the API's origin: read the thread again for its preview URLs (workspace.previews[].url), on the previews' own origin."
        )
      }
      // And the previews' listener serves nothing but previews: not the API (even with a key), not the console.
      const previews = TestServer.client(yield* previewListener)
      for (const elsewhere of ["/v1/agents", "/v1/openapi.json", "/console", "/healthz"]) {
        yield* TestServer.expectError(yield* previews.request("GET", elsewhere), 404, "not_found", "route_not_found")
      }

      // A listed port with no service behind it.
      yield* TestServer.expectError(
        yield* anonymous("GET", previewPath(active, 8001)),
        502,
        "api_error",
        "service_unavailable"
      )

      // Forged: another signature, or the signature of port 8000 on port 8001's URL; nothing reaches the service.
      const token = path.split("/")[3]
      const signature = token.split(".")[3]
      const flipped = `${signature[0] === "A" ? "B" : "A"}${signature.slice(1)}`
      for (
        const forged of [
          path.replace(signature, flipped),
          previewPath(active, 8001).replace(/[\w-]{43}\/$/, `${signature}/`),
          "/v1/previews/thread_x.8000.99999999999.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/",
          "/v1/previews/"
        ]
      ) {
        yield* TestServer.expectError(
          yield* anonymous("GET", `${forged}hello.txt`),
          403,
          "permission_error",
          "permission_denied"
        )
      }
      // Expired: the URL in hand is refused; re-reading the thread gives one that works.
      yield* TestClock.adjust(2 * hourMs)
      yield* TestServer.expectError(
        yield* anonymous("GET", `${path}hello.txt`),
        403,
        "permission_error",
        "permission_denied"
      )
      const fresh = previewPath(yield* getThread(thread.id), 8000)
      assert.notStrictEqual(fresh, path)
      assert.strictEqual((yield* anonymous("GET", `${fresh}hello.txt`)).text, "hello from the workspace\n")
      // The service saw the command's request and the valid previews (the page, the listing, the page again), nothing else.
      const requests = (yield* logOf(thread.id, "web")).split("\n").filter((line) => line.includes("\"GET "))
      assert.deepStrictEqual(requests.map((line) => /"(GET [^"]+)" (\d+)/.exec(line)?.slice(1).join(" ")), [
        "GET /hello.txt HTTP/1.1 200",
        "GET /hello.txt HTTP/1.1 200",
        "GET / HTTP/1.1 200",
        "GET /hello.txt HTTP/1.1 200"
      ])

      // Deleting the thread stops its services.
      yield* TestServer.expectOk(yield* TestServer.request("DELETE", `/v1/threads/${thread.id}`), 200, Schema.Unknown)
      assert.deepStrictEqual(yield* (yield* WorkspaceServices).running(thread.id), [])
      yield* TestServer.expectError(
        yield* anonymous("GET", `${fresh}hello.txt`),
        502,
        "api_error",
        "service_unavailable"
      )
    }))

  it.effect("preview traffic postpones hibernation; hibernation stops the services and their previews", () =>
    Effect.gen(function*() {
      const recovery = yield* RunRecovery
      const { thread } = yield* agentWithThread({
        workspace: {
          ...offline,
          services: [{ name: "idle", command: "python3 -m http.server 8020 --bind 127.0.0.1", port: 8020 }],
          previews: { enabled: true, ports: [8020] },
          lifecycle: { idleMinutes: 5 }
        }
      })
      yield* send(thread.id, toolStep("write_file", { path: "index.txt", content: "still here\n" }))
      const path = previewPath(yield* getThread(thread.id), 8020)
      // Four minutes after the run, a visitor: the workspace is in use again.
      yield* TestClock.adjust("4 minutes")
      assert.strictEqual((yield* anonymous("GET", `${path}index.txt`)).text, "still here\n")
      yield* TestClock.adjust("2 minutes")
      yield* recovery.pass
      assert.strictEqual((yield* getThread(thread.id)).workspace?.status, "active")
      assert.strictEqual((yield* anonymous("GET", `${path}index.txt`)).status, 200)
      // Five minutes without a run or a visitor: hibernated; the service stopped with the local copy.
      yield* TestClock.adjust("6 minutes")
      yield* recovery.pass
      assert.strictEqual((yield* getThread(thread.id)).workspace?.status, "hibernated")
      assert.deepStrictEqual(yield* (yield* WorkspaceServices).running(thread.id), [])
      assert.strictEqual((yield* anonymous("GET", `${path}index.txt`)).status, 502)
    }))

  it.effect("a preview forwards method, path, query and body, never the caller's credentials nor the service's cookies", () =>
    Effect.gen(function*() {
      const echo = [
        "import http.server",
        "class H(http.server.BaseHTTPRequestHandler):",
        "    def do_POST(self):",
        "        body = self.rfile.read(int(self.headers.get('content-length', '0')))",
        "        self.send_response(201)",
        "        self.send_header('set-cookie', 'session=leak')",
        "        self.send_header('service-worker-allowed', '/')",
        "        self.send_header('x-echo', 'yes')",
        "        self.end_headers()",
        "        seen = ','.join(sorted(k.lower() for k in self.headers.keys()))",
        "        self.wfile.write(f\"{self.command} {self.path} host={self.headers['host']} prefix={self.headers['x-forwarded-prefix']} headers={seen} body=\".encode() + body)",
        "http.server.HTTPServer(('127.0.0.1', 8002), H).serve_forever()"
      ].join("\n")
      const { thread } = yield* agentWithThread({
        workspace: {
          ...offline,
          services: [{ name: "echo", command: "python3 echo.py", port: 8002 }],
          previews: { enabled: true, ports: [8002] }
        }
      })
      // The first open finds no echo.py: the service exits; on-resume starts it again at the next open.
      yield* send(thread.id, toolStep("write_file", { path: "echo.py", content: echo }))
      assert.include(yield* logOf(thread.id, "echo"), "can't open file")
      yield* send(thread.id, "/text again")
      const path = previewPath(yield* getThread(thread.id), 8002)
      const reply = yield* anonymous("POST", `${path}submit?x=1`, {
        rawBody: "ping",
        headers: {
          authorization: "Bearer sk_test_acme_prod",
          cookie: "svc=1",
          "x-custom": "kept",
          "content-type": "text/plain"
        }
      })
      assert.strictEqual(reply.status, 201)
      assert.strictEqual(reply.headers.get("x-echo"), "yes")
      assert.isNull(reply.headers.get("set-cookie"))
      assert.isNull(reply.headers.get("service-worker-allowed"))
      const [line, body] = reply.text.split(" body=")
      assert.strictEqual(body, "ping")
      assert.include(line, `POST /submit?x=1 host=localhost:8002 prefix=${path.slice(0, -1)} headers=`)
      const headers = line.split("headers=")[1].split(",")
      assert.includeMembers(headers, ["x-custom", "content-length", "x-forwarded-host", "x-forwarded-proto"])
      for (const name of ["authorization", "cookie"]) assert.notInclude(headers, name)
    }))

  it.effect("restartPolicy: on-resume services start again when the workspace opens after they stopped, manual ones do not", () =>
    Effect.gen(function*() {
      const server = (name: string, port: number) =>
        `echo ${name} >> starts.txt; exec python3 -m http.server ${port} --bind 127.0.0.1`
      const { thread } = yield* agentWithThread({
        workspace: {
          ...offline,
          services: [
            { name: "resumed", command: server("resumed", 8010), port: 8010 },
            { name: "once", command: server("once", 8011), port: 8011, restartPolicy: "manual" }
          ]
        }
      })
      const probe = bashStep(
        "for p in 8010 8011; do curl -s -o /dev/null -w \"$p:%{http_code} \" localhost:$p/; done; cat starts.txt | sort"
      )
      const first = yield* send(thread.id, probe)
      assert.deepStrictEqual(outputsOf(first.parsed.chunks), [{
        exitCode: 0,
        stdout: "8010:200 8011:200 once\nresumed\n",
        stderr: ""
      }])
      // As hibernation or a node restart would: the workspace's processes stop, its files stay.
      yield* (yield* WorkspaceServices).stop(thread.id)
      const second = yield* send(thread.id, probe)
      assert.deepStrictEqual(outputsOf(second.parsed.chunks), [{
        exitCode: 0,
        stdout: "8010:200 8011:000 once\nresumed\nresumed\n",
        stderr: ""
      }])
      assert.deepStrictEqual(yield* (yield* WorkspaceServices).running(thread.id), ["resumed"])
    }))

  it.effect("a workspace cannot point a port's socket at a host socket: the preview does not follow the link", () =>
    Effect.gen(function*() {
      const hostSocket = join(tmpdir(), `svc-host-secret-${process.pid}.sock`)
      rmSync(hostSocket, { force: true })
      yield* Effect.acquireRelease(
        Effect.callback<ReturnType<typeof createServer>>((resume) => {
          const server = createServer((_req, res) => res.end("host secret"))
          server.listen(hostSocket, () => resume(Effect.succeed(server)))
        }),
        (server) => Effect.sync(() => server.close())
      )
      const { thread } = yield* agentWithThread({
        workspace: {
          ...offline,
          services: [{
            name: "planter",
            command: `ln -s ${hostSocket} /run/svc-ports/8003.sock; exec sleep 600`,
            port: 8003
          }],
          previews: { enabled: true, ports: [8003] }
        }
      })
      yield* send(thread.id, "/text hi")
      const reply = yield* anonymous("GET", previewPath(yield* getThread(thread.id), 8003))
      assert.notInclude(reply.text, "host secret")
      yield* TestServer.expectError(reply, 502, "api_error", "service_unavailable")
    }))
})

/** A local API a restricted workspace may reach by name (api.test, through the test DNS server). */
const NetworkHarness = Layer.unwrap(
  Effect.gen(function*() {
    const dns = yield* DnsServer
    const api = yield* Effect.acquireRelease(
      Effect.callback<ReturnType<typeof createServer>>((resume) => {
        const server = createServer((req, res) => res.end(`api says hello to ${req.url ?? ""}`))
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
      }),
      (server) => Effect.sync(() => server.close())
    )
    const address = api.address()
    const apiPort = typeof address === "object" && address !== null ? address.port : 0
    return Layer.merge(TestServer.layer({ dnsServers: [dns.address] }), Layer.succeed(ApiPort)(apiPort))
  })
).pipe(Layer.provideMerge(DnsServer.layer({ "api.test": "127.0.0.1" })))

layer(NetworkHarness, { timeout: TestServer.setupTimeout })("workspace services with a network", (it) => {
  it.effect("a service reaches allowDomains through an egress proxy of its own, after the run that started it ended", () =>
    Effect.gen(function*() {
      const apiPort = yield* ApiPort
      const relay = [
        "import http.server, urllib.request",
        "class H(http.server.BaseHTTPRequestHandler):",
        "    def do_GET(self):",
        `        body = urllib.request.urlopen('http://api.test:${apiPort}' + self.path).read()`,
        "        self.send_response(200)",
        "        self.end_headers()",
        "        self.wfile.write(body)",
        "http.server.HTTPServer(('127.0.0.1', 8020), H).serve_forever()"
      ].join("\n")
      const { thread } = yield* agentWithThread({
        workspace: {
          type: "managed",
          network: { mode: "restricted", allowDomains: ["api.test"] },
          services: [{ name: "relay", command: "python3 relay.py", port: 8020 }],
          previews: { enabled: true, ports: [8020] }
        }
      })
      yield* send(thread.id, toolStep("write_file", { path: "relay.py", content: relay }))
      yield* send(thread.id, "/text the relay starts now")
      // Both runs ended: their egress proxies are closed; the service's own still serves it.
      const reply = yield* anonymous("GET", `${previewPath(yield* getThread(thread.id), 8020)}from-a-preview`)
      assert.strictEqual(reply.text, "api says hello to /from-a-preview")
    }))
})
