/**
 * The service's REST collections (`/v1/agents`, `/v1/tool-servers`, ...) as
 * a test calls them, through the client in context and as key a unless told
 * otherwise: the raw calls, which return the reply for tests of a route
 * itself, and `create` / `read` / `update`, which assert the success status
 * and decode the resource, for tests that only need one to exist.
 */
import { Effect, Schema } from "effect"
import { Agent } from "../../domain/Agent.ts"
import { HttpConnection } from "../../domain/HttpConnection.ts"
import { Page } from "../../domain/Page.ts"
import { ResultHandler } from "../../domain/ResultHandler.ts"
import { Secret } from "../../domain/Secret.ts"
import { SecretContext } from "../../domain/SecretContext.ts"
import { Thread, ThreadCreated } from "../../domain/Thread.ts"
import { ToolApprovalHook } from "../../domain/ToolApprovalHook.ts"
import { ToolServer } from "../../domain/ToolServer.ts"
import * as TestServer from "./TestServer.ts"

type Call<A> = Effect.Effect<A, never, TestServer.TestApi>

export interface Collection<A, C = A> {
  readonly path: string
  /** What a read answers. */
  readonly schema: Schema.Decoder<A>
  /** `POST <path>` */
  readonly post: (body: unknown, key?: string) => Call<TestServer.Reply>
  /** `GET <path>/<id>` */
  readonly get: (id: string, key?: string) => Call<TestServer.Reply>
  /** `PATCH <path>/<id>` */
  readonly patch: (id: string, body: unknown, key?: string) => Call<TestServer.Reply>
  /** `DELETE <path>/<id>` */
  readonly del: (id: string, key?: string) => Call<TestServer.Reply>
  /** `POST <path>/<id>/<action>` (`test`, `rotate`, ...), with a body when given one. */
  readonly action: (id: string, action: string, body?: unknown, key?: string) => Call<TestServer.Reply>
  /** `post` (of `{}` unless given a body), asserting the create status. */
  readonly create: (body?: unknown, key?: string) => Call<C>
  /** `get`, asserting 200. */
  readonly read: (id: string, key?: string) => Call<A>
  /** `patch`, asserting 200. */
  readonly update: (id: string, body: unknown, key?: string) => Call<A>
  /** The ids of every one `key` lists, through all the pages. */
  readonly ids: (key?: string) => Call<ReadonlyArray<string>>
}

const Listed = Page(Schema.Struct({ id: Schema.String }))

const make = <A, C>(
  path: string,
  schema: Schema.Decoder<A>,
  createStatus: number,
  createSchema: Schema.Decoder<C>
): Collection<A, C> => {
  const { Keys, expectOk, request } = TestServer
  const post = (body: unknown, key: string = Keys.a) => request("POST", path, { body, key })
  const get = (id: string, key: string = Keys.a) => request("GET", `${path}/${id}`, { key })
  const patch = (id: string, body: unknown, key: string = Keys.a) => request("PATCH", `${path}/${id}`, { body, key })
  return {
    path,
    schema,
    post,
    get,
    patch,
    del: (id, key = Keys.a) => request("DELETE", `${path}/${id}`, { key }),
    action: (id, action, body, key = Keys.a) =>
      request("POST", `${path}/${id}/${action}`, body === undefined ? { key } : { body, key }),
    create: (body = {}, key) => Effect.flatMap(post(body, key), (reply) => expectOk(reply, createStatus, createSchema)),
    read: (id, key) => Effect.flatMap(get(id, key), (reply) => expectOk(reply, 200, schema)),
    update: (id, body, key) => Effect.flatMap(patch(id, body, key), (reply) => expectOk(reply, 200, schema)),
    ids: (key = Keys.a) =>
      Effect.gen(function*() {
        const ids: Array<string> = []
        let cursor: string | null = null
        do {
          const query: string = cursor === null ? "?limit=100" : `?limit=100&cursor=${encodeURIComponent(cursor)}`
          const page = yield* expectOk(yield* request("GET", path + query, { key }), 200, Listed)
          ids.push(...page.data.map((item) => item.id))
          cursor = page.nextCursor
        } while (cursor !== null)
        return ids
      })
  }
}

/** The collection at `path`, whose create answers 200 with the resource (decoded with `schema`, as reads are). */
export const collection = <A>(path: string, schema: Schema.Decoder<A>): Collection<A> => make(path, schema, 200, schema)

let sequence = 0
/** `<base>-<n>`, a fresh name each call: adapter and secret names are unique per organization, and tests share a database. */
export const uniqueName = (base: string) => `${base}-${++sequence}`

export const agents = collection("/v1/agents", Agent)
/** A create answers 201 with the thread and `created` (false on an idempotent replay). */
export const threads: Collection<Thread, ThreadCreated> = make("/v1/threads", Thread, 201, ThreadCreated)
export const secrets = collection("/v1/secrets", Secret)
export const secretContexts = collection("/v1/secret-contexts", SecretContext)
export const toolServers = collection("/v1/tool-servers", ToolServer)
export const httpConnections = collection("/v1/http-connections", HttpConnection)
export const toolApprovalHooks = collection("/v1/tool-approval-hooks", ToolApprovalHook)
export const resultHandlers = collection("/v1/result-handlers", ResultHandler)
