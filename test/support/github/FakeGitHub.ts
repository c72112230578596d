/**
 * A local fake GitHub for tests (GitHub cannot be reached from these
 * machines): one HTTP server that is both the REST API (`/api/v3`) and the web
 * host (install page, OAuth exchange, git over smart HTTP). It is stateful
 * (FakeState), verifies the app's JWTs against the app's public key (RS256,
 * `iss` = the app id, unexpired), mints installation tokens narrowed to the
 * repositories and permissions asked for and enforces them on every call and
 * on git (clone needs contents:read, push contents:write), and answers in the
 * shapes of GitHub's OpenAPI description (Shapes.ts; every answer is logged so
 * a test can validate it). Git is real: `git http-backend` over the bare
 * repositories, behind `Authorization: Basic x-access-token:<token>`.
 */
import { Effect, type Scope } from "effect"
import { createHmac, generateKeyPairSync, verify as verifySignature } from "node:crypto"
import { rmSync } from "node:fs"
import type { IncomingMessage, ServerResponse } from "node:http"
import { join } from "node:path"
import { backend } from "../GitServer.ts"
import { bodyText, listen } from "../HttpPeer.ts"
import { FakeState, type Level, type Permissions, type Repo, type Token } from "./FakeState.ts"
import { type FaultAnswer, type Faulted, type Hold, Interceptions } from "./Interceptions.ts"
import { routes as appRoutes } from "./RoutesApp.ts"
import { routes as checkRoutes } from "./RoutesChecks.ts"
import { routes as issueRoutes } from "./RoutesIssues.ts"
import { routes as miscRoutes } from "./RoutesMisc.ts"
import { routes as repoRoutes } from "./RoutesRepos.ts"
import { shaped } from "./Shapes.ts"

export type Auth = "jwt" | "installation" | "user" | "token" | "none"

export interface Request {
  readonly params: Record<string, string>
  readonly query: URLSearchParams
  readonly body: Record<string, unknown>
  readonly token: Token | undefined
  readonly tokenText: string | undefined
}

export type Answer = { readonly status: number; readonly body?: unknown; readonly raw?: boolean }

export interface Route {
  readonly method: string
  /** As GitHub's OpenAPI description writes it. */
  readonly path: string
  readonly auth: Auth
  /** What an installation token needs for it (checked with the repository in the path). */
  readonly needs?: Permissions
  readonly handle: (state: FakeState, req: Request) => Answer
}

export interface Logged {
  readonly method: string
  readonly path: string
  readonly status: number
  readonly body: unknown
}

export interface FakeGitHub {
  readonly state: FakeState
  readonly origin: string
  readonly apiUrl: string
  readonly webUrl: string
  readonly appId: string
  readonly slug: string
  readonly clientId: string
  readonly clientSecret: string
  readonly webhookSecret: string
  readonly privateKey: string
  /** Every JSON answer the API gave, for the shape test. */
  readonly answers: Array<Logged>
  /** Every request line seen (method and URL, no headers). */
  readonly requests: Array<string>
  /** Every API request that carried a body: its line and its JSON body (what GitHub was asked to do). */
  readonly received: Array<{ readonly line: string; readonly body: Record<string, unknown> }>
  /** The signature header GitHub would send with a webhook body. */
  readonly sign: (body: string) => string
  /** Holds the next `method path` request (`/api/v3/...` for the API), applied or not, until released (Interceptions). */
  readonly hold: (method: string, path: string, options: { readonly apply: boolean }) => Hold
  /** Answers the next `method path` request with a failure built from the request (the credential it carried, its body). */
  readonly fault: (method: string, path: string, answer: (request: Faulted) => FaultAnswer) => void
}

const levels: Record<Level, number> = { read: 1, write: 2 }

/** Whether a token's permissions cover `needs` (every installation token may read metadata, as on GitHub). */
export const allows = (granted: Permissions, needs: Permissions): boolean =>
  Object.entries(needs).every(([name, level]) => {
    const has = name === "metadata" ? granted[name] ?? "read" : granted[name]
    return has !== undefined && levels[has] >= levels[level]
  })

const compile = (path: string) =>
  new RegExp(
    `^${path.replace(/\{(\w+)\}/g, (_, name: string) => (name === "path" ? "(?<path>.+)" : `(?<${name}>[^/]+)`))}$`
  )

const send = (res: ServerResponse, status: number, body: unknown) => {
  if (body === undefined) return void res.writeHead(status).end()
  res.writeHead(status, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify(body))
}

const base64url = (text: string) => Buffer.from(text, "base64url").toString("utf8")

/** An https listener on a free port of 127.0.0.1 with this key and certificate. */

/** The fake on a free port of 127.0.0.1, its URLs naming it `host`; over https with `tls`. */
export const start = (
  host = "127.0.0.1",
  tls?: { readonly key: string; readonly cert: string }
): Effect.Effect<FakeGitHub, never, Scope.Scope> =>
  Effect.gen(function*() {
    const state = new FakeState()
    yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(state.root, { recursive: true, force: true })))
    const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
    const pem = privateKey.export({ type: "pkcs1", format: "pem" }).toString()
    const appId = "4242"
    const webhookSecret = "whsec_fake_github"
    const answers: Array<Logged> = []
    const requests: Array<string> = []
    const received: Array<{ readonly line: string; readonly body: Record<string, unknown> }> = []
    const interceptions = new Interceptions()
    const table = [...appRoutes, ...repoRoutes, ...issueRoutes, ...checkRoutes, ...miscRoutes].map((r) => ({
      ...r,
      pattern: compile(r.path)
    }))

    const jwtValid = (jwt: string): boolean => {
      const [header, payload, signature] = jwt.split(".")
      if (signature === undefined) return false
      const ok = verifySignature(
        "RSA-SHA256",
        Buffer.from(`${header}.${payload}`),
        publicKey,
        Buffer.from(signature, "base64url")
      )
      const claims = JSON.parse(base64url(payload)) as { iss?: unknown; exp?: unknown }
      return ok && String(claims.iss) === appId && typeof claims.exp === "number" && claims.exp * 1000 > Date.now()
    }

    const tokenOf = (req: IncomingMessage): string | undefined => {
      const header = req.headers.authorization ?? ""
      const match = /^(?:token|bearer)\s+(.+)$/i.exec(header)
      if (match !== null) return match[1]
      const basic = /^basic\s+(.+)$/i.exec(header)
      return basic === null ? undefined : Buffer.from(basic[1], "base64").toString("utf8").split(":")[1]
    }

    /** Git over smart HTTP: `/<owner>/<name>.git/...`, contents read to fetch, write to push. */
    const git = (req: IncomingMessage, res: ServerResponse, url: URL): boolean => {
      const match = /^\/([^/]+)\/([^/]+?)\.git(\/.*)$/.exec(url.pathname)
      if (match === null) return false
      const repo = state.repo(match[1], match[2])
      const push = url.searchParams.get("service") === "git-receive-pack" || match[3] === "/git-receive-pack"
      const text = tokenOf(req)
      const token = text === undefined ? undefined : state.tokens.get(text)
      const full = `${match[1]}/${match[2]}`.toLowerCase()
      const permitted = repo !== undefined && token?.kind === "installation" && token.expires > Date.now() &&
        token.repositories.includes(full) && allows(token.permissions, { contents: push ? "write" : "read" })
      if (!permitted) {
        res.writeHead(401, { "www-authenticate": "Basic realm=\"GitHub\"" }).end("Authentication failed\n")
        return true
      }
      if (!push) state.syncPullRefs(repo)
      backend(join(state.root, "git"), { pathInfo: `/${match[1]}/${match[2]}.git${match[3]}`, receivePack: true })(
        req,
        res
      )
      return true
    }

    const handler = async (req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? "/", "http://fake")
      requests.push(`${req.method} ${url.pathname}${url.search}`)
      if (git(req, res, url)) return
      // GitHub Enterprise's layout: REST under /api/v3, GraphQL at /api/graphql.
      const graphql = url.pathname === "/api/graphql"
      const api = graphql || url.pathname.startsWith("/api/v3")
      const path = graphql ? "/graphql" : api ? url.pathname.slice("/api/v3".length) || "/" : url.pathname
      const candidates = table.filter((r) => r.method === req.method && (r.path.startsWith("/login/") ? !api : api))
      const route = candidates.map((r) => ({ r, m: r.pattern.exec(path) })).find((x) => x.m !== null)
      if (route === undefined || route.m === null) {
        return send(res, 404, { message: "Not Found", documentation_url: "https://docs.github.com/rest" })
      }
      const raw = await bodyText(req)
      const body = raw === "" ? {} : (JSON.parse(raw) as Record<string, unknown>)
      if (raw !== "") {
        received.push({ line: `${req.method} ${url.pathname}`, body })
      }
      const params = Object.fromEntries(
        Object.entries(route.m.groups ?? {}).map(([k, v]) => [k, decodeURIComponent(v)])
      )
      const text = tokenOf(req)
      const token = text === undefined ? undefined : state.tokens.get(text)
      const { r } = route
      const unauthorized = () =>
        send(res, 401, { message: "Bad credentials", documentation_url: "https://docs.github.com/rest" })
      if (r.auth === "jwt" && (text === undefined || !jwtValid(text))) return unauthorized()
      if (
        r.auth === "installation" && (token?.kind !== "installation" || token.expires <= Date.now())
      ) return unauthorized()
      if (r.auth === "user" && (token?.kind !== "user" || token.expired)) return unauthorized()
      if (r.auth === "token" && token === undefined) return unauthorized()
      if (token?.kind === "installation" && params["owner"] !== undefined && params["repo"] !== undefined) {
        const full = `${params["owner"]}/${params["repo"]}`.toLowerCase()
        if (!token.repositories.includes(full) || !allows(token.permissions, r.needs ?? { metadata: "read" })) {
          return send(res, 403, {
            message: "Resource not accessible by integration",
            documentation_url: "https://docs.github.com/rest"
          })
        }
      }
      const fault = interceptions.takeFault(r.method, url.pathname)
      if (fault !== undefined) {
        const failure = fault({ credential: text, body })
        return void res.writeHead(failure.status, {
          "content-type": "application/json; charset=utf-8",
          ...failure.headers
        }).end(JSON.stringify(failure.body))
      }
      let gone = false
      res.once("close", () => (gone = true))
      const answer = await interceptions.around(r.method, url.pathname, () =>
        gone, () =>
        r.handle(state, { params, query: url.searchParams, body, token, tokenText: text }))
      if (answer === undefined) {
        return
      }
      const out = answer.body === undefined || answer.raw === true || answer.status >= 300
        ? answer.body
        : shaped(r.method, r.path, answer.status, answer.body)
      if (out !== undefined && answer.raw !== true && answer.status < 300) {
        answers.push({ method: r.method, path: r.path, status: answer.status, body: out })
      }
      send(res, answer.status, out)
    }

    // A bug in the fake answers 500 at once rather than leaving the service waiting for its timeout.
    const serve = (req: IncomingMessage, res: ServerResponse) =>
      void handler(req, res).catch((
        e: unknown
      ) => (res.headersSent ? res.destroy() : send(res, 500, { message: `fake GitHub failed: ${String(e)}` })))
    const port = yield* listen(serve, tls)
    const origin = `${tls === undefined ? "http" : "https"}://${host}:${port}`
    return {
      state,
      origin,
      apiUrl: `${origin}/api/v3`,
      webUrl: origin,
      appId,
      slug: "svc-test-app",
      clientId: "Iv1.fakeclient",
      clientSecret: "fake-client-secret-0123456789",
      webhookSecret,
      privateKey: pem,
      answers,
      requests,
      received,
      sign: (body) =>
        `sha256=${createHmac("sha256", webhookSecret).update(body).digest("hex")}`,
      hold: (method, path, options) =>
        interceptions.hold(method, path, options),
      fault: (method, path, answer) => interceptions.fault(method, path, answer)
    }
  })

/** The repository named by a route's params. */
export const repoOf = (state: FakeState, req: Request): Repo | undefined =>
  state.repo(req.params["owner"] ?? "", req.params["repo"] ?? "")

export const notFound: Answer = {
  status: 404,
  body: { message: "Not Found", documentation_url: "https://docs.github.com/rest" }
}
