/**
 * Every field where a user registers a URL the service will reach (tool
 * servers, HTTP connection specs and base URLs, tool approval hooks, result
 * handlers, managed workspace seeds), as the API takes it on create and on
 * update: the table the SSRF corpus runs against.
 */
import { Effect } from "effect"
import * as Collection from "../../support/Collection.ts"
import * as TestServer from "../../support/TestServer.ts"

const inlineSpec = JSON.stringify({ openapi: "3.0.3", info: { title: "t", version: "1" }, paths: {} })

const seeded = (url: string) => ({ workspace: { type: "managed", seed: { type: "git", url } } })

export interface Creation {
  readonly what: string
  readonly path: string
  /** `details.field` of the refusal. */
  readonly field: string
  readonly body: (url: string) => Record<string, unknown>
  /** A route that stores nothing (validation only). */
  readonly storesNothing?: boolean
}

/** The create (and validate) routes, each putting `url` into one URL field. */
export const creations: ReadonlyArray<Creation> = [
  {
    what: "tool server",
    path: "/v1/tool-servers",
    field: "url",
    body: (url) => ({ name: Collection.uniqueName("ts"), transport: "http", url })
  },
  {
    what: "tool server (sse)",
    path: "/v1/tool-servers",
    field: "url",
    body: (url) => ({ name: Collection.uniqueName("ts"), transport: "sse", url })
  },
  {
    what: "HTTP connection spec",
    path: "/v1/http-connections",
    field: "spec",
    body: (url) => ({ name: Collection.uniqueName("hc"), spec: url })
  },
  {
    what: "HTTP connection baseUrl",
    path: "/v1/http-connections",
    field: "baseUrl",
    body: (url) => ({ name: Collection.uniqueName("hc"), spec: inlineSpec, baseUrl: url })
  },
  {
    what: "tool approval hook",
    path: "/v1/tool-approval-hooks",
    field: "url",
    body: (url) => ({ name: "hook", url, secret: "whsec_corpus_signing_secret" })
  },
  {
    what: "result handler",
    path: "/v1/result-handlers",
    field: "url",
    body: (url) => ({ kind: "artifact", name: "rh", url, secret: "rh_corpus_signing_secret" })
  },
  { what: "workspace seed", path: "/v1/agents", field: "workspace.seed.url", body: seeded },
  {
    what: "workspace seed (validate)",
    path: "/v1/agents/validate",
    field: "workspace.seed.url",
    body: seeded,
    storesNothing: true
  }
]

/** The collections the creations store into, listed to show that nothing was. */
export const collections = [
  "/v1/tool-servers",
  "/v1/http-connections",
  "/v1/tool-approval-hooks",
  "/v1/result-handlers",
  "/v1/agents"
]

export interface Update {
  readonly what: string
  readonly field: string
  /** Creates the resource with `url` (a permitted one) in the field; returns its path. */
  readonly create: (url: string) => Effect.Effect<string, never, TestServer.TestApi>
  readonly patch: (url: string) => Record<string, unknown>
  /** The field's value in the resource as read back. */
  readonly read: (resource: Record<string, unknown>) => unknown
}

const at = (collection: { readonly path: string }) => (resource: { readonly id: string }) =>
  `${collection.path}/${resource.id}`

/** The update routes: a resource registered with a permitted URL, then patched with another. */
export const updates: ReadonlyArray<Update> = [
  {
    what: "tool server",
    field: "url",
    create: (url) =>
      Effect.map(
        Collection.toolServers.create({ name: Collection.uniqueName("ts"), transport: "http", url }),
        at(Collection.toolServers)
      ),
    patch: (url) => ({ url }),
    read: (r) => r["url"]
  },
  {
    what: "HTTP connection spec",
    field: "spec",
    create: (url) =>
      Effect.map(
        Collection.httpConnections.create({ name: Collection.uniqueName("hc"), spec: url }),
        at(Collection.httpConnections)
      ),
    patch: (url) => ({ spec: url }),
    read: (r) => r["spec"]
  },
  {
    what: "HTTP connection baseUrl",
    field: "baseUrl",
    create: (url) =>
      Effect.map(
        Collection.httpConnections.create({ name: Collection.uniqueName("hc"), spec: inlineSpec, baseUrl: url }),
        at(Collection.httpConnections)
      ),
    patch: (url) => ({ baseUrl: url }),
    read: (r) => r["baseUrl"]
  },
  {
    what: "tool approval hook",
    field: "url",
    create: (url) =>
      Effect.map(
        Collection.toolApprovalHooks.create({ name: "hook", url, secret: "whsec_corpus_signing_secret" }),
        at(Collection.toolApprovalHooks)
      ),
    patch: (url) => ({ url }),
    read: (r) => r["url"]
  },
  {
    what: "result handler",
    field: "url",
    create: (url) =>
      Effect.map(
        Collection.resultHandlers.create({ kind: "artifact", name: "rh", url, secret: "rh_corpus_signing_secret" }),
        at(Collection.resultHandlers)
      ),
    patch: (url) => ({ url }),
    read: (r) => r["url"]
  },
  {
    what: "workspace seed",
    field: "workspace.seed.url",
    create: (url) => Effect.map(Collection.agents.create(seeded(url)), at(Collection.agents)),
    patch: seeded,
    read: (r) => (r["workspace"] as { readonly seed?: { readonly url?: string } } | undefined)?.seed?.url
  }
]
