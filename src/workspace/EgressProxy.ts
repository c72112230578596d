/**
 * The egress proxy of one workspace: the only way out of a sandbox that has a
 * network (`restricted` or `public`). It listens on a unix socket that the
 * sandbox reaches through a bridge (the sandbox itself has no network
 * namespace route), speaks HTTP proxy: `CONNECT host:port` tunnels (https, git
 * over https) and absolute-form plain HTTP requests; anything else is refused.
 * Every destination passes the workspace's NetworkPolicy twice: the host name
 * before any DNS, then every address it resolves to (so a name cannot be
 * pointed at a private address between check and connect: the connection goes
 * to the address that was checked). The proxy belongs to the service, so it
 * is also where a credential is added to a request, never the sandbox: with
 * `inject` (a code-hosting git operation's own proxy) plain-HTTP requests for
 * the git origin's host get its `Authorization` header, and are sent on over
 * the origin's own scheme (https origins: git in the sandbox is pointed at
 * `http://<host>/` for that one command, so the proxy sees the request and
 * re-originates it over TLS, the remote URL staying the plain https one).
 * Anything the sandbox sends as its own Authorization for that host is replaced.
 */
import { Effect, type Scope } from "effect"
import { rmSync } from "node:fs"
import { createServer, type IncomingMessage, request as httpRequest, type ServerResponse } from "node:http"
import { request as httpsRequest } from "node:https"
import { connect, isIP, type Socket } from "node:net"
import { forwardable } from "./ForwardedHeaders.ts"
import { addressRefusal, type EgressRules, hostRefusal } from "./NetworkPolicy.ts"

/** Resolves a host name to its addresses (the service's resolver: SVC_DNS_SERVERS or the system's). */
export type Resolve = (
  hostname: string
) => Promise<ReadonlyArray<{ readonly address: string; readonly family: number }>>

/** One decision of the proxy, for the log and for tests. */
export interface Decision {
  readonly host: string
  readonly port: number
  readonly allowed: boolean
  readonly reason?: string
}

/** The credential of a git origin, added by the proxy to the origin's requests (never seen by the sandbox). */
export interface Injection {
  /** The origin's host name, as requests name it. */
  readonly host: string
  /** The origin's scheme and port (where requests are sent on). */
  readonly scheme: "http" | "https"
  readonly port: number
  /** Read at each request: the header value, or undefined once withdrawn. */
  readonly authorization: () => string | undefined
}

export interface EgressProxyOptions {
  readonly socketPath: string
  readonly rules: EgressRules
  readonly resolve: Resolve
  readonly onDecision?: (decision: Decision) => void
  readonly inject?: Injection
}

/** Connections (tunnels) one workspace's proxy holds at once. */
export const MaxTunnels = 128

const titles = { 400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway", 503: "Service Unavailable" } as const

const refuseRaw = (socket: Socket, status: keyof typeof titles, reason: string) => {
  const text = `${reason}\n`
  const title = titles[status]
  socket.end(
    `HTTP/1.1 ${status} ${title}\r\ncontent-type: text/plain\r\ncontent-length: ${
      Buffer.byteLength(text)
    }\r\nconnection: close\r\n\r\n${text}`
  )
}

const refuseResponse = (res: ServerResponse, status: 400 | 403 | 502, reason: string) => {
  res.writeHead(status, { "content-type": "text/plain", connection: "close" })
  res.end(`${reason}\n`)
}

/** `host:port` of a CONNECT request (IPv6 in brackets). */
const authority = (target: string): { host: string; port: number } | undefined => {
  const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(target)
  if (match === null) return undefined
  const port = Number(match[2])
  return port >= 1 && port <= 65535 ? { host: match[1], port } : undefined
}

export const start = (
  options: EgressProxyOptions
): Effect.Effect<{ readonly socketPath: string }, Error, Scope.Scope> => {
  const { rules, resolve } = options
  const note = (decision: Decision) => options.onDecision?.(decision)

  /** The address to connect to, once the host and every address it resolves to passed the policy; else why not. */
  const admit = async (
    host: string,
    port: number
  ): Promise<{ readonly address: string } | { readonly refused: string }> => {
    const bare = host.startsWith("[") ? host.slice(1, -1) : host
    const decided = await decide(bare)
    note(
      "address" in decided
        ? { host: bare, port, allowed: true }
        : { host: bare, port, allowed: false, reason: decided.refused }
    )
    return decided
  }

  const decide = async (host: string): Promise<{ readonly address: string } | { readonly refused: string }> => {
    const hostProblem = hostRefusal(rules, host)
    if (hostProblem !== undefined) return { refused: hostProblem }
    const addresses = isIP(host) !== 0
      ? [{ address: host, family: isIP(host) }]
      : await resolve(host).catch(() => [])
    if (addresses.length === 0) return { refused: `${host} does not resolve` }
    for (const { address } of addresses) {
      const problem = addressRefusal(rules, host, address)
      if (problem !== undefined) return { refused: problem }
    }
    return { address: addresses[0].address }
  }

  /** Tunnels leave the HTTP server's bookkeeping: they are closed with the proxy. */
  const tunnels = new Set<Socket>()

  /** The injection that applies to a request for `host`, if any. */
  const injectionFor = (host: string): Injection | undefined =>
    options.inject !== undefined && options.inject.host.toLowerCase() === host.toLowerCase()
      ? options.inject
      : undefined

  /** An absolute-form plain HTTP request, forwarded to the checked address with its own Host (and the origin's credential). */
  const forward = (req: IncomingMessage, res: ServerResponse, target: URL, port: number, address: string) => {
    const injection = injectionFor(target.hostname)
    const authorization = injection?.authorization()
    const headers = {
      ...forwardable(req.headers, injection === undefined ? undefined : new Set(["authorization"])),
      host: target.host,
      ...(authorization === undefined ? {} : { authorization })
    }
    const path = `${target.pathname}${target.search}`
    const send = injection?.scheme === "https" ? httpsRequest : httpRequest
    const upstreamPort = injection === undefined ? port : injection.port
    const tls = injection?.scheme === "https" ? { servername: target.hostname } : {}
    const upstream = send({
      host: address,
      port: upstreamPort,
      method: req.method,
      path,
      headers,
      setHost: false,
      ...tls
    }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, forwardable(answer.headers))
      answer.pipe(res)
    })
    upstream.on(
      "error",
      () => (res.headersSent ? res.destroy() : refuseResponse(res, 502, "egress proxy: the destination did not answer"))
    )
    // A client that goes away takes its upstream request with it.
    res.on("close", () => upstream.destroy())
    req.pipe(upstream)
  }

  /** A CONNECT tunnel to the checked address; the client's first bytes (`head`) go first. */
  const tunnel = (socket: Socket, head: Buffer, port: number, address: string) => {
    const upstream = connect({ host: address, port })
    upstream.on(
      "error",
      () => (upstream.readyState === "opening"
        ? refuseRaw(socket, 502, "egress proxy: the destination did not answer")
        : socket.destroy())
    )
    upstream.once("connect", () => {
      socket.write("HTTP/1.1 200 Connection Established\r\n\r\n")
      if (head.length > 0) upstream.write(head)
      upstream.pipe(socket)
      socket.pipe(upstream)
    })
    socket.on("close", () => upstream.destroy())
  }

  const server = createServer((req, res) => {
    const target = req.url !== undefined && URL.canParse(req.url) ? new URL(req.url) : undefined
    if (target === undefined || target.protocol !== "http:") {
      return refuseResponse(res, 400, "egress proxy: send absolute http:// URLs, or CONNECT for https")
    }
    const port = target.port === "" ? 80 : Number(target.port)
    void admit(target.hostname, port).then((decided) =>
      "refused" in decided
        ? refuseResponse(res, 403, `egress refused: ${decided.refused}`)
        : forward(req, res, target, port, decided.address)
    )
  })

  server.on("connect", (req: IncomingMessage, socket: Socket, head: Buffer) => {
    socket.on("error", () => socket.destroy())
    const target = authority(req.url ?? "")
    if (target === undefined) return refuseRaw(socket, 400, "egress proxy: CONNECT needs host:port")
    // The service's file descriptors are shared by every workspace: one workspace gets a bounded share.
    if (tunnels.size >= MaxTunnels) {
      return refuseRaw(socket, 503, `egress proxy: at most ${MaxTunnels} connections at once`)
    }
    tunnels.add(socket)
    socket.on("close", () => tunnels.delete(socket))
    void admit(target.host, target.port).then((decided) => {
      // The client may have gone while the destination was checked: open nothing for it.
      if (socket.destroyed) return
      return "refused" in decided
        ? refuseRaw(socket, 403, `egress refused: ${decided.refused}`)
        : tunnel(socket, head, target.port, decided.address)
    })
  })
  // Bytes that are not HTTP at all get a 400 and the connection is closed.
  server.on(
    "clientError",
    (
      _error,
      socket: Socket
    ) => (socket.writable ? refuseRaw(socket, 400, "egress proxy: not an HTTP request") : socket.destroy())
  )

  return Effect.acquireRelease(
    Effect.callback<{ readonly socketPath: string }, Error>((resume) => {
      // A socket file left by a process that died is in the way of listening again.
      rmSync(options.socketPath, { force: true })
      server.once("error", (error) => resume(Effect.fail(error)))
      server.listen(options.socketPath, () => resume(Effect.succeed({ socketPath: options.socketPath })))
    }),
    () =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        for (const socket of tunnels) socket.destroy()
        server.close(() => resume(Effect.void))
      })
  )
}
