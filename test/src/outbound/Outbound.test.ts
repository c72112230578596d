/**
 * The guarded client's redirect handling, against real local HTTP servers:
 * every hop re-checked, credentials dropped when the origin changes, 303 (and
 * 301/302 after POST) become GET, at most five hops.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { Outbound, UrlRefused } from "../../../src/outbound/Outbound.ts"

interface Seen {
  readonly method: string
  readonly path: string
  readonly authorization: string | undefined
  readonly cookie: string | undefined
  readonly body: string
}

/** A local server answering with `handle`, recording what it saw. */
const server = (handle: (req: IncomingMessage, res: ServerResponse, port: number) => void) =>
  Effect.acquireRelease(
    Effect.callback<
      { readonly url: string; readonly port: number; readonly seen: Array<Seen>; readonly close: () => void }
    >((resume) => {
      const seen: Array<Seen> = []
      const s = createServer((req, res) => {
        let body = ""
        req.on("data", (d: Buffer) => (body += d.toString()))
        req.on("end", () => {
          seen.push({
            method: req.method ?? "",
            path: req.url ?? "",
            authorization: req.headers.authorization,
            cookie: req.headers.cookie,
            body
          })
          const address = s.address()
          handle(req, res, typeof address === "object" && address !== null ? address.port : 0)
        })
      })
      s.listen(0, "127.0.0.1", () => {
        const address = s.address()
        const port = typeof address === "object" && address !== null ? address.port : 0
        resume(Effect.succeed({ url: `http://127.0.0.1:${port}`, port, seen, close: () => s.close() }))
      })
    }),
    (s) => Effect.sync(() => s.close())
  )

const ok = (res: ServerResponse) => {
  res.writeHead(200, { "content-type": "text/plain" })
  res.end("ok")
}

const outbound = Outbound.make({ allowPrivate: true, dnsServers: [] })
const fetchText = (url: string, init: RequestInit) =>
  Effect.promise(async () => {
    const r = await outbound.fetch(url, init)
    return { status: r.status, text: await r.text() }
  })

describe("guarded outbound client", () => {
  it.live("drops Authorization and Cookie when a redirect changes origin, keeps them on the same origin", () =>
    Effect.gen(function*() {
      const target = yield* server((_req, res) => ok(res))
      const origin = yield* server((req, res, port) => {
        if (req.url === "/same") {
          res.writeHead(302, { location: `http://127.0.0.1:${port}/final` })
          return res.end()
        }
        if (req.url === "/final") return ok(res)
        res.writeHead(302, { location: `${target.url}/elsewhere` })
        res.end()
      })
      const headers = { authorization: "Bearer secret-token", cookie: "session=abc" }

      const cross = yield* fetchText(`${origin.url}/start`, { headers })
      assert.deepStrictEqual(cross, { status: 200, text: "ok" })
      assert.strictEqual(origin.seen[0].authorization, "Bearer secret-token")
      assert.deepStrictEqual(target.seen, [{
        method: "GET",
        path: "/elsewhere",
        authorization: undefined,
        cookie: undefined,
        body: ""
      }])

      const same = yield* fetchText(`${origin.url}/same`, { headers })
      assert.strictEqual(same.status, 200)
      assert.deepStrictEqual(origin.seen.slice(1).map((s) => [s.path, s.authorization, s.cookie]), [
        ["/same", "Bearer secret-token", "session=abc"],
        ["/final", "Bearer secret-token", "session=abc"]
      ])
    }).pipe(Effect.scoped))

  it.live("drops the headers named in credentialHeaders (an apiKey header) when a redirect changes origin", () =>
    Effect.gen(function*() {
      const seenKeys: Array<string | undefined> = []
      const target = yield* server((req, res) => {
        seenKeys.push(req.headers["x-api-key"] as string | undefined)
        ok(res)
      })
      const origin = yield* server((req, res) => {
        seenKeys.push(req.headers["x-api-key"] as string | undefined)
        res.writeHead(307, { location: `${target.url}/elsewhere` })
        res.end()
      })
      const reply = yield* Effect.promise(async () => {
        const r = await outbound.fetch(`${origin.url}/start`, {
          headers: { "x-api-key": "key-123" },
          credentialHeaders: ["x-api-key"]
        })
        return r.status
      })
      assert.strictEqual(reply, 200)
      assert.deepStrictEqual(seenKeys, ["key-123", undefined])
    }).pipe(Effect.scoped))

  it.live("303, and 301/302 after a POST, continue as GET without the body; 307 keeps method and body", () =>
    Effect.gen(function*() {
      const target = yield* server((_req, res) => ok(res))
      const origin = yield* server((req, res) => {
        const status = Number(req.url?.slice(1))
        res.writeHead(status, { location: `${target.url}/after-${status}` })
        res.end()
      })
      for (const status of [303, 301, 302, 307]) {
        yield* fetchText(`${origin.url}/${status}`, {
          method: "POST",
          body: "{\"a\":1}",
          headers: { "content-type": "application/json" }
        })
      }
      assert.deepStrictEqual(target.seen.map((s) => [s.path, s.method, s.body]), [
        ["/after-303", "GET", ""],
        ["/after-301", "GET", ""],
        ["/after-302", "GET", ""],
        ["/after-307", "POST", "{\"a\":1}"]
      ])
    }).pipe(Effect.scoped))

  it.live("refuses a sixth redirect and a redirect to a non-http URL", () =>
    Effect.gen(function*() {
      const loop = yield* server((req, res) => {
        const n = Number(req.url?.slice(1))
        res.writeHead(302, { location: `/${n + 1}` })
        res.end()
      })
      const tooMany = yield* Effect.tryPromise(() => outbound.fetch(`${loop.url}/0`)).pipe(Effect.flip)
      assert.instanceOf(tooMany.cause, UrlRefused)
      assert.match(String((tooMany.cause as Error).message), /more than 5 redirects/)
      assert.strictEqual(loop.seen.length, 6)

      const toFile = yield* server((_req, res) => {
        res.writeHead(302, { location: "file:///etc/passwd" })
        res.end()
      })
      const refused = yield* Effect.tryPromise(() => outbound.fetch(toFile.url)).pipe(Effect.flip)
      assert.instanceOf(refused.cause, UrlRefused)
      assert.match(String((refused.cause as Error).message), /must be an http\(s\) URL/)
    }).pipe(Effect.scoped))

  it.live("with the policy on, a loopback URL is refused before any connection", () =>
    Effect.gen(function*() {
      const target = yield* server((_req, res) => ok(res))
      const strict = Outbound.make({ allowPrivate: false, dnsServers: [] })
      const refused = yield* Effect.tryPromise(() => strict.fetch(target.url.replace("http:", "https:"))).pipe(
        Effect.flip
      )
      assert.instanceOf(refused.cause, UrlRefused)
      assert.match(String((refused.cause as Error).message), /loopback, private/)
      assert.strictEqual(target.seen.length, 0)
    }).pipe(Effect.scoped))
})
