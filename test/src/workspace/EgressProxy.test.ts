/**
 * The workspace egress proxy against real sockets: a unix-socket proxy, a
 * real DNS server answering the test's names, and a local HTTP server as the
 * destination. CONNECT tunnels and absolute-form HTTP pass only where the
 * network policy allows the host and every address it resolves to.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { promises as dns } from "node:dns"
import { mkdtempSync } from "node:fs"
import type { IncomingMessage } from "node:http"
import { connect, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as EgressProxy from "../../../src/workspace/EgressProxy.ts"
import { addressRefusal, type EgressRules, hostRefusal } from "../../../src/workspace/NetworkPolicy.ts"
import { DnsServer } from "../../support/DnsServer.ts"
import { listen } from "../../support/HttpPeer.ts"

const records = { "allowed.test": "127.0.0.1", "wild.example.test": "127.0.0.1", "service.test": "127.0.0.1" }

/** The destination: answers `hello <path>` and records the Host and proxy headers it saw. */
const destination = Effect.suspend(() => {
  const seen: Array<IncomingMessage["headers"]> = []
  return Effect.map(
    listen((req, res) => {
      seen.push(req.headers)
      res.writeHead(200, { "content-type": "text/plain" })
      res.end(`hello ${req.url ?? ""}`)
    }),
    (port) => ({ port, seen })
  )
})

/** A proxy with `rules` on a fresh socket, resolving through the test DNS server; its decisions are kept. */
const proxy = (rules: EgressRules) =>
  Effect.gen(function*() {
    const server = yield* DnsServer
    const resolver = new dns.Resolver()
    resolver.setServers([server.address])
    const decisions: Array<EgressProxy.Decision> = []
    const socketPath = join(mkdtempSync(join(tmpdir(), "svc-egress-")), "proxy.sock")
    yield* EgressProxy.start({
      socketPath,
      rules,
      resolve: async (host) => (await resolver.resolve4(host)).map((address) => ({ address, family: 4 })),
      onDecision: (d) => decisions.push(d)
    })
    return { socketPath, decisions }
  })

/** Writes `first`; once a response head arrives, writes `then` (if any); resolves with everything read until close or `until` is seen. */
const exchange = (socketPath: string, first: string, then?: string, until?: string) =>
  Effect.callback<string>((resume) => {
    const socket = connect(socketPath)
    let received = ""
    let sentSecond = then === undefined
    const done = () => {
      socket.destroy()
      resume(Effect.succeed(received))
    }
    socket.on("data", (chunk: Buffer) => {
      received += chunk.toString("utf8")
      if (!sentSecond && received.includes("\r\n\r\n")) {
        sentSecond = true
        if (received.startsWith("HTTP/1.1 200")) socket.write(then ?? "")
        else return done()
      }
      if (until !== undefined && received.includes(until)) done()
    })
    socket.on("end", done)
    socket.on("error", done)
    socket.write(first)
  }).pipe(Effect.timeout("5 seconds"), Effect.orDie)

const restricted = (allowDomains: ReadonlyArray<string>, allowPrivate: boolean): EgressRules => ({
  network: { mode: "restricted", allowDomains },
  allowPrivate,
  serviceHosts: []
})

describe("network policy", () => {
  it("a wildcard matches names below the domain only; matching ignores case and a trailing dot", () => {
    const rules = restricted(["*.example.com", "api.other.com"], false)
    assert.isUndefined(hostRefusal(rules, "a.example.com"))
    assert.isUndefined(hostRefusal(rules, "A.B.Example.COM."))
    assert.isUndefined(hostRefusal(rules, "api.other.com"))
    assert.strictEqual(hostRefusal(rules, "example.com"), "example.com is not in the workspace's allowDomains")
    assert.strictEqual(hostRefusal(rules, "badexample.com"), "badexample.com is not in the workspace's allowDomains")
    assert.strictEqual(hostRefusal(rules, "x.api.other.com"), "x.api.other.com is not in the workspace's allowDomains")
    assert.strictEqual(
      hostRefusal({ ...rules, network: { mode: "offline" } }, "a.example.com"),
      "the workspace is offline"
    )
    assert.isUndefined(hostRefusal({ ...rules, network: { mode: "public" } }, "anything.net"))
  })

  it("private and loopback addresses are refused in every mode unless named exactly with SVC_ALLOW_PRIVATE_URLS", () => {
    for (const address of ["127.0.0.1", "10.1.2.3", "::1", "::ffff:192.168.1.1"]) {
      assert.isString(addressRefusal(restricted(["a.test"], false), "a.test", address))
      assert.isString(
        addressRefusal({ network: { mode: "public" }, allowPrivate: true, serviceHosts: [] }, "a.test", address)
      )
      assert.isString(addressRefusal(restricted(["*.test"], true), "a.test", address))
      assert.isUndefined(addressRefusal(restricted(["a.test"], true), "a.test", address))
      assert.isUndefined(
        addressRefusal({ network: { mode: "public" }, allowPrivate: true, serviceHosts: ["a.test"] }, "a.test", address)
      )
    }
    assert.isUndefined(addressRefusal(restricted(["a.test"], false), "a.test", "93.184.215.14"))
  })

  it("link-local and cloud metadata addresses are refused whatever the setting, even named exactly", () => {
    for (const address of ["169.254.169.254", "169.254.1.1", "fe80::1", "::ffff:169.254.169.254", "fd00:ec2::254"]) {
      for (const allowPrivate of [false, true]) {
        assert.include(addressRefusal(restricted(["a.test"], allowPrivate), "a.test", address), "a.test resolves to")
        assert.isString(
          addressRefusal({ network: { mode: "public" }, allowPrivate, serviceHosts: ["a.test"] }, "a.test", address)
        )
      }
    }
  })
})

layer(DnsServer.layer(records), { excludeTestServices: true })("egress proxy", (it) => {
  it.effect("CONNECT to an exactly listed host (SVC_ALLOW_PRIVATE_URLS) tunnels to the destination", () =>
    Effect.gen(function*() {
      const target = yield* destination
      const { socketPath, decisions } = yield* proxy(restricted(["allowed.test"], true))
      const reply = yield* exchange(
        socketPath,
        `CONNECT allowed.test:${target.port} HTTP/1.1\r\nHost: allowed.test:${target.port}\r\n\r\n`,
        `GET /inside HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n`,
        "hello /inside"
      )
      assert.isTrue(reply.startsWith("HTTP/1.1 200 Connection Established\r\n\r\n"), reply)
      assert.include(reply, "hello /inside")
      assert.deepStrictEqual(decisions, [{ host: "allowed.test", port: target.port, allowed: true }])
    }).pipe(Effect.scoped))

  it.effect("absolute-form HTTP is forwarded with its Host; proxy credentials never travel further", () =>
    Effect.gen(function*() {
      const target = yield* destination
      const { socketPath } = yield* proxy(restricted(["allowed.test"], true))
      const reply = yield* exchange(
        socketPath,
        `GET http://allowed.test:${target.port}/page?q=1 HTTP/1.1\r\nHost: allowed.test:${target.port}\r\nProxy-Authorization: Basic c2VjcmV0\r\nConnection: close\r\n\r\n`
      )
      assert.isTrue(reply.startsWith("HTTP/1.1 200"), reply)
      assert.include(reply, "hello /page?q=1")
      assert.strictEqual(target.seen[0]?.["host"], `allowed.test:${target.port}`)
      assert.isUndefined(target.seen[0]?.["proxy-authorization"])
    }).pipe(Effect.scoped))

  it.effect("refusals answer 403 before anything is reached: unlisted host (no DNS query), private address, wildcard to private, public mode to loopback", () =>
    Effect.gen(function*() {
      const target = yield* destination
      const dnsServer = yield* DnsServer
      const connectTo = (host: string) => `CONNECT ${host}:${target.port} HTTP/1.1\r\nHost: ${host}\r\n\r\n`
      const cases: ReadonlyArray<readonly [EgressRules, string, string]> = [
        [restricted(["allowed.test"], true), "elsewhere.test", "elsewhere.test is not in the workspace's allowDomains"],
        [restricted(["allowed.test"], false), "allowed.test", "allowed.test resolves to 127.0.0.1 is a loopback"],
        [
          restricted(["*.example.test"], true),
          "wild.example.test",
          "wild.example.test resolves to 127.0.0.1 is a loopback"
        ],
        [
          { network: { mode: "public" }, allowPrivate: true, serviceHosts: [] },
          "allowed.test",
          "allowed.test resolves to 127.0.0.1"
        ],
        [restricted(["allowed.test"], true), "127.0.0.1", "127.0.0.1 is not in the workspace's allowDomains"]
      ]
      for (const [rules, host, reason] of cases) {
        const { socketPath, decisions } = yield* proxy(rules)
        const reply = yield* exchange(socketPath, connectTo(host))
        assert.isTrue(reply.startsWith("HTTP/1.1 403 Forbidden"), reply)
        assert.include(reply, `egress refused: ${reason}`)
        assert.strictEqual(decisions[0]?.allowed, false)
      }
      assert.strictEqual(yield* dnsServer.queriesFor("elsewhere.test"), 0)
      assert.deepStrictEqual(target.seen, [])
    }).pipe(Effect.scoped))

  it.effect("a host the service names (seed, code host) is reachable in public mode with SVC_ALLOW_PRIVATE_URLS", () =>
    Effect.gen(function*() {
      const target = yield* destination
      const { socketPath } = yield* proxy({
        network: { mode: "public" },
        allowPrivate: true,
        serviceHosts: ["service.test"]
      })
      const reply = yield* exchange(
        socketPath,
        `GET http://service.test:${target.port}/repo.git HTTP/1.1\r\nHost: service.test\r\nConnection: close\r\n\r\n`
      )
      assert.include(reply, "hello /repo.git")
    }).pipe(Effect.scoped))

  it.effect("one workspace holds at most MaxTunnels connections at once: the next is 503, those held keep working", () =>
    Effect.gen(function*() {
      const target = yield* destination
      const { socketPath } = yield* proxy(restricted(["allowed.test"], true))
      const request = `CONNECT allowed.test:${target.port} HTTP/1.1\r\nHost: allowed.test\r\n\r\n`
      /** A tunnel kept open once established (closed with the test's scope). */
      const open = Effect.acquireRelease(
        Effect.callback<Socket>((resume) => {
          const socket = connect(socketPath)
          socket.once("data", () => resume(Effect.succeed(socket)))
          socket.write(request)
        }),
        (socket) => Effect.sync(() => socket.destroy())
      )
      const held = yield* Effect.forEach(Array.from({ length: EgressProxy.MaxTunnels }), () => open, {
        concurrency: 16
      })
      const refused = yield* exchange(socketPath, request)
      assert.isTrue(refused.startsWith("HTTP/1.1 503"), refused)
      // The tunnels held keep working.
      const through = yield* Effect.callback<string>((resume) => {
        let text = ""
        held[0]?.on("data", (chunk: Buffer) => {
          text += chunk.toString("utf8")
          if (text.includes("hello /")) resume(Effect.succeed(text))
        })
        held[0]?.write("GET /still HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
      })
      assert.include(through, "hello /still")
    }).pipe(Effect.scoped))

  it.effect("bytes that are not an HTTP proxy request get 400; an origin-form request gets 400", () =>
    Effect.gen(function*() {
      const { socketPath } = yield* proxy(restricted(["allowed.test"], true))
      assert.isTrue((yield* exchange(socketPath, "SSH-2.0-OpenSSH_9.2\r\n\r\n")).startsWith("HTTP/1.1 400"))
      const originForm = yield* exchange(
        socketPath,
        "GET /relative HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n"
      )
      assert.isTrue(originForm.startsWith("HTTP/1.1 400"), originForm)
      assert.include(originForm, "send absolute http:// URLs, or CONNECT for https")
    }).pipe(Effect.scoped))
})
