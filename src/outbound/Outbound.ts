/**
 * The one guarded HTTP client for user-registered URLs. Registration checks
 * the URL and the addresses its hostname resolves to; at request time the
 * connection itself resolves through a lookup that refuses forbidden
 * addresses (so DNS rebinding between check and connect cannot slip through),
 * every redirect hop is re-checked, and credentials are stripped when a
 * redirect changes origin. An operator's trusted origins (SVC_TRUSTED_ORIGINS,
 * an internal tool server) are exempt, each exactly: a redirect from one to
 * anywhere else is judged like any URL.
 */
import { Context, Effect, Layer } from "effect"
import { promises as dns } from "node:dns"
import { isIP, type LookupFunction } from "node:net"
import { Agent, fetch as undiciFetch, Headers as UndiciHeaders } from "undici"
import { InvalidRequest } from "../../domain/Errors.ts"
import { checkUrlShape, forbiddenAddress, metadataAddress, metadataHostnames } from "./UrlPolicy.ts"

export interface OutboundOptions {
  /** SVC_ALLOW_PRIVATE_URLS=1: http and private addresses allowed (unsafe in production). */
  readonly allowPrivate: boolean
  /** SVC_DNS_SERVERS: resolvers to use instead of the system's (`host:port`, comma-separated). */
  readonly dnsServers: ReadonlyArray<string>
  /** SVC_TRUSTED_ORIGINS: exact origins (`scheme://host[:port]`) exempt from the policy. */
  readonly trustedOrigins?: ReadonlyArray<string>
}

/**
 * The settings that allow a URL the policy refused, named in the refusal when
 * they would: a development server (http, localhost, a private address) is
 * the usual case.
 */
const developmentHint = (reason: string): string =>
  /must use https|loopback|private|fully qualified hostname|resolves to/.test(reason)
    ? " For a development server set SVC_ALLOW_PRIVATE_URLS=1 (http and private addresses, never in production);" +
      " SVC_TRUSTED_ORIGINS lists origins allowed as they are."
    : ""

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
  /** Checks a URL given at registration for the guarded client; fails with 400 url_not_allowed naming `field`. */
  readonly checkUrl: (raw: string, field: string) => Effect.Effect<URL, InvalidRequest>
  /** As checkUrl, for a URL reached through a workspace's egress proxy (a seed), where trusted origins do not apply. */
  readonly checkEgressUrl: (raw: string, field: string) => Effect.Effect<URL, InvalidRequest>
  /** The URL when its form may be requested (a trusted origin, or the checks that need no DNS); the connection checks the addresses. */
  readonly permitsShape: (raw: string) => URL | undefined
  /** fetch for user-registered URLs; rejects with UrlRefused when the policy refuses a hop. */
  readonly fetch: GuardedFetch
  /**
   * fetch for a URL a model chose (web_fetch): no trusted-origin exemption, and link-local and cloud
   * metadata addresses refused at every hop even when SVC_ALLOW_PRIVATE_URLS=1.
   */
  readonly fetchUntrusted: GuardedFetch
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

    /** A connection's lookup through `resolve`. */
    const lookupVia =
      (resolve: (hostname: string) => Promise<ReadonlyArray<{ address: string; family: number }>>): LookupFunction =>
      (hostname, lookupOptions, callback) => {
        resolve(hostname).then(
          (addresses) => {
            if (lookupOptions.all === true) {
              callback(null, addresses.map((a) => ({ address: a.address, family: a.family })))
            } else callback(null, addresses[0].address, addresses[0].family)
          },
          (error: Error) => callback(Object.assign(error, { code: "ENOTFOUND" }), "", 0)
        )
      }

    /** Connections resolve through the service's resolver; unless private addresses are allowed, only to public ones. */
    const dispatcher = new Agent({ connect: { lookup: lookupVia(options.allowPrivate ? resolveAll : resolvePublic) } })
    // Trusted origins connect wherever their names resolve.
    const trustedDispatcher = new Agent({ connect: { lookup: lookupVia(resolveAll) } })
    /** A model-chosen URL's connections: as `dispatcher`, and never to a link-local or metadata address. */
    const untrustedDispatcher = options.allowPrivate
      ? new Agent({
        connect: {
          lookup: lookupVia(async (hostname) => {
            const addresses = await resolveAll(hostname)
            for (const { address } of addresses) {
              const reason = metadataAddress(address)
              if (reason !== undefined) throw new UrlRefused(`${hostname} resolves to ${reason}`)
            }
            return addresses
          })
        }
      })
      : dispatcher

    const trusted = new Set(options.trustedOrigins ?? [])
    /** A trusted origin's URL (without credentials), else undefined. */
    const trustedUrl = (raw: string): URL | undefined => {
      if (trusted.size === 0 || !URL.canParse(raw)) return undefined
      const url = new URL(raw)
      return trusted.has(url.origin) && url.username === "" && url.password === "" ? url : undefined
    }

    /** The literal address of a URL a model chose, when it is link-local or cloud metadata. */
    const metadataHost = (raw: string): string | undefined => {
      const host = new URL(raw).hostname
      const bare = host.startsWith("[") ? host.slice(1, -1) : host
      if (metadataHostnames.includes(bare.toLowerCase().replace(/\.$/, ""))) return `${bare}, a cloud metadata host`
      return isIP(bare) === 0 ? undefined : metadataAddress(bare)
    }

    const makeFetch = (untrusted: boolean): GuardedFetch => async (url, init = {}) => {
      let current = url.toString()
      let method = (init.method ?? "GET").toUpperCase()
      if (init.body !== undefined && init.body !== null && typeof init.body !== "string") {
        throw new TypeError("the guarded client sends string bodies only")
      }
      let body: string | undefined = init.body ?? undefined
      const headers = new UndiciHeaders(Object.fromEntries(new Headers(init.headers).entries()))
      for (let hop = 0; hop <= maxRedirects; hop++) {
        const isTrusted = !untrusted && trustedUrl(current) !== undefined
        const shape = isTrusted ? undefined : checkUrlShape(current, options.allowPrivate)
        if (typeof shape === "string") throw new UrlRefused(`${current} ${shape}`)
        const metadataReason = untrusted ? metadataHost(current) : undefined
        if (metadataReason !== undefined) throw new UrlRefused(`${current} points to ${metadataReason}`)
        const response = await undiciFetch(current, {
          method,
          headers,
          body: body ?? null,
          redirect: "manual",
          signal: init.signal ?? null,
          dispatcher: isTrusted ? trustedDispatcher : untrusted ? untrustedDispatcher : dispatcher
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
    const guardedFetch = makeFetch(false)

    const refuse = (field: string, raw: string, reason: string) =>
      new InvalidRequest({
        code: "url_not_allowed",
        message: `${field} '${raw}' ${reason}.${options.allowPrivate ? "" : developmentHint(reason)}`,
        details: { field }
      })

    const checkPolicy = (raw: string, field: string): Effect.Effect<URL, InvalidRequest> =>
      Effect.gen(function*() {
        const shape = checkUrlShape(raw, options.allowPrivate)
        if (typeof shape === "string") return yield* refuse(field, raw, shape)
        if (shape.hostname !== undefined) {
          const hostname = shape.hostname
          yield* Effect.tryPromise({
            try: () => resolvePublic(hostname),
            catch: (e) =>
              refuse(
                field,
                raw,
                e instanceof UrlRefused
                  ? e.message.replace(`${hostname} `, "host ")
                  : "has a hostname that does not resolve"
              )
          })
        }
        return shape.url
      })

    return Outbound.of({
      checkUrl: (raw, field) => {
        const url = trustedUrl(raw)
        return url === undefined ? checkPolicy(raw, field) : Effect.succeed(url)
      },
      checkEgressUrl: checkPolicy,
      permitsShape: (raw) => {
        const shape = trustedUrl(raw) ?? checkUrlShape(raw, options.allowPrivate)
        return typeof shape === "string" ? undefined : shape instanceof URL ? shape : shape.url
      },
      fetch: guardedFetch,
      fetchUntrusted: makeFetch(true),
      resolve: resolveAll
    })
  }

  static readonly layer = (options: OutboundOptions) => Layer.succeed(Outbound)(Outbound.make(options))
}
