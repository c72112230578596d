/**
 * HTTP connections (spec 4.7): registration rules and the `test` route
 * (load, parse, map, filter; zero operations is still connected).
 */
import { Clock, Context, Effect, Layer } from "effect"
import { InvalidRequest, UpstreamFailed } from "../../domain/Errors.ts"
import {
  type HttpConnection,
  HttpConnectionConfig,
  type HttpConnectionCreate,
  type HttpConnectionPatch
} from "../../domain/HttpConnection.ts"
import { HttpConnectionId } from "../../domain/Ids.ts"
import type { PageRequest } from "../../domain/Page.ts"
import type { Principal } from "../../domain/Principal.ts"
import type { ToolRef } from "../../domain/ToolPolicy.ts"
import { canonicalJson } from "../CanonicalJson.ts"
import { IdGenerator } from "../IdGenerator.ts"
import { Outbound } from "../outbound/Outbound.ts"
import { Secrets } from "../secrets/Secrets.ts"
import { ResourceStore } from "../store/ResourceStore.ts"
import { agentsReferencing, makeCrud, mergeMetadata, rowFields } from "./AdapterCrud.ts"
import { boundedInputSchemas } from "./OpenApiOperation.ts"
import * as OpenApiSpec from "./OpenApiSpec.ts"
import { DefaultPolicy, namespacedToolName, resolvePolicy } from "./ToolPolicyRules.ts"

/** The mapped, allowed operations with their model-facing names (illegal or over-long names are not exposed). */
export const exposedOperations = (
  connectionName: string,
  ops: ReadonlyArray<OpenApiSpec.Operation>,
  allowedOperations: ReadonlyArray<string> | null
): ReadonlyArray<{ readonly operation: OpenApiSpec.Operation; readonly ref: ToolRef }> =>
  OpenApiSpec.allowed(ops, allowedOperations).flatMap((operation) => {
    const namespacedName = namespacedToolName("api", connectionName, operation.name)
    return namespacedName === undefined ? [] : [{ operation, ref: { name: operation.name, namespacedName } }]
  })

const make = Effect.gen(function*() {
  const store = yield* ResourceStore
  const ids = yield* IdGenerator
  const secrets = yield* Secrets
  const outbound = yield* Outbound
  const crud = makeCrud(store, ids, {
    table: "http_connections",
    idKind: "httpConnection",
    id: HttpConnectionId,
    resource: "http_connection",
    uniqueNames: true,
    config: HttpConnectionConfig,
    view: (row, c): HttpConnection => ({
      ...rowFields(row),
      object: "http_connection",
      ...c
    })
  })

  /**
   * Registration check of `spec`: a permitted URL, or an inline JSON document of a supported
   * version whose exposed operations' input schemas are within the schema bounds.
   */
  const checkSpec = Effect.fn("HttpConnections.checkSpec")(
    function*(spec: string, allowedOperations: ReadonlyArray<string> | null) {
      const source = OpenApiSpec.classifySpec(spec)
      if (source._tag === "Invalid") return yield* InvalidRequest.forField("spec", source.message)
      if (source._tag === "Url") {
        yield* outbound.checkUrl(source.url, "spec")
        return spec.trim()
      }
      const loaded = yield* OpenApiSpec.parse(source.text, undefined).pipe(
        Effect.mapError((e) => InvalidRequest.forField("spec", `spec: ${e.message}.`))
      )
      const bounded = boundedInputSchemas(
        OpenApiSpec.allowed(OpenApiSpec.operations(loaded.document), allowedOperations)
      )
      if (bounded._tag === "Refused") return yield* InvalidRequest.forField("spec", `spec: ${bounded.message}.`)
      return source.text
    }
  )

  const checkBaseUrl = (baseUrl: string | null) =>
    baseUrl === null ? Effect.succeed(null) : Effect.map(outbound.checkUrl(baseUrl, "baseUrl"), (u) => u.toString())

  const requireBaseUrlForBearer = (config: HttpConnectionConfig) =>
    config.auth.type === "bearer" && config.baseUrl === null
      ? Effect.fail(
        InvalidRequest.forField(
          "baseUrl",
          "Bearer auth requires an explicit baseUrl: the credential is only ever sent to that exact origin."
        )
      )
      : Effect.void

  return {
    create: Effect.fn("HttpConnections.create")(function*(principal: Principal, input: HttpConnectionCreate) {
      const spec = yield* checkSpec(input.spec, input.allowedOperations ?? null)
      const baseUrl = yield* checkBaseUrl(input.baseUrl ?? null)
      const policy = yield* resolvePolicy(principal, DefaultPolicy, input, secrets.requireRef)
      const config: HttpConnectionConfig = {
        spec,
        baseUrl,
        allowedOperations: input.allowedOperations ?? null,
        ...policy
      }
      yield* requireBaseUrlForBearer(config)
      return yield* crud.create(principal, { name: input.name, config, metadata: input.metadata ?? {}, sealed: null })
    }),
    get: (principal: Principal, id: HttpConnectionId) => crud.get(principal, id),
    list: (principal: Principal, page: PageRequest) => crud.list(principal, page),
    update: Effect.fn("HttpConnections.update")(
      function*(principal: Principal, id: HttpConnectionId, patch: HttpConnectionPatch) {
        const current = yield* crud.load(principal, id)
        const c = current.config
        const allowedOperations = patch.allowedOperations ?? c.allowedOperations
        // An inline document is checked again when the operations it exposes change.
        const recheck = patch.spec !== undefined || patch.allowedOperations !== undefined
        const next: HttpConnectionConfig = {
          spec: recheck ? yield* checkSpec(patch.spec ?? c.spec, allowedOperations) : c.spec,
          baseUrl: patch.baseUrl === undefined ? c.baseUrl : yield* checkBaseUrl(patch.baseUrl),
          allowedOperations,
          ...(yield* resolvePolicy(principal, c, patch, secrets.requireRef))
        }
        yield* requireBaseUrlForBearer(next)
        const name = patch.name ?? current.row.name
        const metadata = yield* mergeMetadata(current.row.metadata, patch.metadata)
        const structural = name !== current.row.name || canonicalJson(next) !== canonicalJson(c)
        return yield* crud.save(principal, current, { name, config: next, metadata, sealed: null }, structural)
      }
    ),
    remove: (principal: Principal, id: HttpConnectionId) =>
      crud.remove(
        principal,
        id,
        () => agentsReferencing(store, principal, [{ capabilities: { http: { connectionIds: [id] } } }])
      ),
    requireRef: crud.requireRef,
    load: crud.load,
    /**
     * `POST /v1/http-connections/:id/test`: an unloadable or unparsable spec is
     * 502 service_unavailable; no resolvable base URL is 400.
     */
    test: Effect.fn("HttpConnections.test")(function*(principal: Principal, id: HttpConnectionId) {
      const { row, config } = yield* crud.load(principal, id)
      const started = yield* Clock.currentTimeMillis
      const loaded = yield* OpenApiSpec.load(config.spec, outbound.fetch, config.requestTimeoutMs).pipe(
        Effect.mapError((e) =>
          new UpstreamFailed({ code: "service_unavailable", message: `HTTP connection test failed: ${e.message}.` })
        )
      )
      if (OpenApiSpec.resolveBaseUrl(loaded, config.baseUrl, outbound.permitsShape) === undefined) {
        return yield* new InvalidRequest({
          code: "invalid_request_error",
          message:
            "No usable base URL: set baseUrl, or give the document an https `servers` entry (3.x) or `host` (2.0) on a public address.",
          details: { field: "baseUrl", errorCode: "base_url_missing" }
        })
      }
      const exposed = exposedOperations(row.name, OpenApiSpec.operations(loaded.document), config.allowedOperations)
      const bounded = boundedInputSchemas(exposed.map((e) => e.operation))
      if (bounded._tag === "Refused") {
        return yield* new UpstreamFailed({
          code: "service_unavailable",
          message: `HTTP connection test failed: ${bounded.message}.`
        })
      }
      const latencyMs = (yield* Clock.currentTimeMillis) - started
      return { connected: true as const, latencyMs, operationCount: exposed.length, tools: exposed.map((e) => e.ref) }
    })
  }
})

export class HttpConnections
  extends Context.Service<HttpConnections, Effect.Success<typeof make>>()("svc/HttpConnections")
{
  static readonly layer = Layer.effect(HttpConnections)(make).pipe(Layer.provide(ResourceStore.layer))
}
