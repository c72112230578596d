/**
 * The one guarded HTTP client for user-registered URLs. Registration checks
 * the URL and the addresses its hostname resolves to; at request time the
 * connection itself resolves through a lookup that refuses forbidden
 * addresses (so DNS rebinding between check and connect cannot slip through),
 * every redirect hop is re-checked, and credentials are stripped when a
 * redirect changes origin.
 */
import { promises as dns } from "node:dns"
import type { LookupFunction } from "node:net"
import { Context, Effect, Layer } from "effect"
import { Agent, fetch as undiciFetch, Headers as UndiciHeaders } from "undici"
import { InvalidRequest } from "../../domain/Errors.ts"
import { checkUrlShape, forbiddenAddress } from "./UrlPolicy.ts"

export interface OutboundOptions {
  /** SVC_ALLOW_PRIVATE_URLS=1: http and private addresses allowed (unsafe in production). */
  readonly allowPrivate: boolean
  /** SVC_DNS_SERVERS: resolvers to use instead of the system's (`host:port`, comma-separated). */
  readonly dnsServers: ReadonlyArray<string>
}

/**
 * Shaped like the global fetch, so SDKs (MCP) can take it as their `fetch`. Bodies are strings.
 * `credentialHeaders` names further headers that carry a credential (an OpenAPI apiKey header):
 * like Authorization and Cookie, they are dropped when a redirect changes origin.
 */
export type GuardedFetch = (
  url: string | URL,
  init?: RequestInit & { readonly credentialHeaders?: ReadonlyArray<string> }
) => Promise<Response>

const credentialHeaders = ["authorization", "cookie", "proxy-authorization"]
const maxRedirects = 5

export class UrlRefused extends Error {
  override readonly name = "UrlRefused"
}

export class Outbound extends Context.Service<Outbound, {
  readonly allowPrivate: boolean
  /** Checks a URL given at registration; fails with 400 url_not_allowed naming `field`. */
  readonly checkUrl: (raw: string, field: string) => Effect.Effect<URL, InvalidRequest>
  /** fetch for user-registered URLs; rejects with UrlRefused when the policy refuses a hop. */
  readonly fetch: GuardedFetch
  /** Every address of a host name, through the service's resolver (SVC_DNS_SERVERS or the system's); no policy applied. */
  readonly resolve: (hostname: string) => Promise<ReadonlyArray<{ readonly address: string; readonly family: number }>>
}>()("svc/Outbound") {
  static readonly make = (options: OutboundOptions) => {
    const resolver = new dns.Resolver()
    if (options.dnsServers.length > 0) resolver.setServers([...options.dnsServers])

    const resolveAll = async (hostname: string): Promise<ReadonlyArray<{ address: string; family: number }>> => {
      if (options.dnsServers.length === 0) return dns.lookup(hostname, { all: true, verbatim: true })
      const [v4, v6] = await Promise.all([
        resolver.resolve4(hostname).catch(() => [] as Array<string>),
        resolver.resolve6(hostname).catch(() => [] as Array<string>)
      ])
      const all = [...v4.map((address) => ({ address, family: 4 })), ...v6.map((address) => ({ address, family: 6 }))]
      if (all.length === 0) throw new Error(`${hostname} does not resolve`)
      return all
    }

    /** Resolves and refuses the whole name when any address is forbidden. */
    const resolvePublic = async (hostname: string) => {
      const addresses = await resolveAll(hostname)
      for (const { address } of addresses) {
        const reason = forbiddenAddress(address)
        if (reason !== undefined) throw new UrlRefused(`${hostname} resolves to ${reason}`)
      }
      return addresses
    }

    /** Connections resolve through the service's resolver; unless private addresses are allowed, only to public ones. */
    const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
      (options.allowPrivate ? resolveAll(hostname) : resolvePublic(hostname)).then(
        (addresses) => {
          if (lookupOptions.all === true) callback(null, addresses.map((a) => ({ address: a.address, family: a.family })))
          else callback(null, addresses[0].address, addresses[0].family)
        },
        (error: Error) => callback(Object.assign(error, { code: "ENOTFOUND" }), "", 0)
      )
    }

    const dispatcher = new Agent({ connect: { lookup } })

    const guardedFetch: GuardedFetch = async (url, init = {}) => {
      let current = url.toString()
      let method = (init.method ?? "GET").toUpperCase()
      if (init.body !== undefined && init.body !== null && typeof init.body !== "string") {
        throw new TypeError("the guarded client sends string bodies only")
      }
      let body: string | undefined = init.body ?? undefined
      const headers = new UndiciHeaders(Object.fromEntries(new Headers(init.headers).entries()))
      for (let hop = 0; hop <= maxRedirects; hop++) {
        const shape = checkUrlShape(current, options.allowPrivate)
        if (typeof shape === "string") throw new UrlRefused(`${current} ${shape}`)
        const response = await undiciFetch(current, {
          method,
          headers,
          body: body ?? null,
          redirect: "manual",
          signal: init.signal ?? null,
          dispatcher
        })
        const location = response.headers.get("location")
        // undici's Response is the implementation behind the global one; only the type packages differ.
        if (response.status < 300 || response.status >= 400 || location === null) return response as unknown as Response
        await response.body?.cancel()
        const next = new URL(location, current)
        if (next.origin !== new URL(current).origin) {
          for (const h of [...credentialHeaders, ...(init.credentialHeaders ?? [])]) headers.delete(h)
        }
        if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === "POST")) {
          method = "GET"
          body = undefined
          headers.delete("content-type")
        }
        current = next.toString()
      }
      throw new UrlRefused(`more than ${maxRedirects} redirects from ${url.toString()}`)
    }

    const refuse = (field: string, raw: string, reason: string) =>
      new InvalidRequest({
        code: "url_not_allowed",
        message: `${field} '${raw}' ${reason}.`,
        details: { field }
      })

    return Outbound.of({
      allowPrivate: options.allowPrivate,
      checkUrl: (raw, field) =>
        Effect.gen(function*() {
          const shape = checkUrlShape(raw, options.allowPrivate)
          if (typeof shape === "string") return yield* refuse(field, raw, shape)
          if (shape.hostname !== undefined) {
            const hostname = shape.hostname
            yield* Effect.tryPromise({
              try: () => resolvePublic(hostname),
              catch: (e) =>
                refuse(field, raw, e instanceof UrlRefused ? e.message.replace(`${hostname} `, "host ") : "has a hostname that does not resolve")
            })
          }
          return shape.url
        }),
      fetch: guardedFetch,
      resolve: resolveAll
    })
  }

  static readonly layer = (options: OutboundOptions) => Layer.succeed(Outbound)(Outbound.make(options))
}
