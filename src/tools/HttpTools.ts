/**
 * HTTP connections as tools (spec 4.7 rules 2-9): each allowed operation is
 * `api__{connection}__{operation}` with path, query, header and cookie
 * parameters as top-level properties and the request body under `body`. A
 * call rebuilds the request, sends it through the guarded client, and returns
 * `{ status, statusText, body }` (non-2xx included). The credential goes
 * where the operation's security requirement says, and only to the exact
 * bound `baseUrl` origin. A connection that is disabled or whose document
 * cannot be loaded contributes no tools and is reported. Operations marked
 * `x-svc-read-only: true` run concurrently with each other; every other call
 * of the connection set runs alone (rule 7).
 */
import { Duration, Effect, Option, Redacted, Schema, Semaphore } from "effect"
import type { OpenAPI } from "openapi-types"
import type { ToolSpec } from "../../domain/Conversation.ts"
import type { SecretId } from "../../domain/Ids.ts"
import type { Principal } from "../../domain/Principal.ts"
import type { PlannedHttpConnection } from "../../domain/RunPlan.ts"
import { ToolLimits } from "../../domain/ToolPolicy.ts"
import { errorText } from "../ErrorText.ts"
import type { GuardedFetch } from "../outbound/Outbound.ts"
import { maskOutcome } from "./CredentialMask.ts"
import { exposedOperations } from "./HttpConnections.ts"
import {
  asRecord,
  boundedInputSchemas,
  type BoundedSchemas,
  buildRequest,
  credentialHeaderOf,
  placementOf
} from "./OpenApiOperation.ts"
import * as OpenApiSpec from "./OpenApiSpec.ts"
import { runHeaders, type RunIdentity } from "./RunHeaders.ts"
import type { SpecCache } from "./SpecCache.ts"
import type { ToolFamily, ToolPolicyRef } from "./ToolFamily.ts"
import * as ToolOutcome from "./ToolOutcome.ts"
import * as ToolResults from "./ToolResults.ts"

/**
 * HTTP operations as tools: requiredSkillsOf reads x-svc-required-skills, else the connection's;
 * deferred holds x-svc-defer, else the connection's `defer` (null or true).
 */
export interface HttpToolset extends ToolFamily {
  /** `data-svc-http-connection-unavailable` chunks to emit. */
  readonly unavailable: ReadonlyArray<
    { readonly connectionId: string; readonly name: string; readonly errorCode: string; readonly message: string }
  >
}

const decodeJson = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Unknown))

/**
 * The bounded input schemas of a parsed document's exposed operations, measured once per
 * document (cached for SpecCache's time-to-live) and set of operations.
 */
const measured = new WeakMap<OpenAPI.Document, Map<string, BoundedSchemas>>()
const boundedSchemas = (doc: OpenAPI.Document, ops: ReadonlyArray<OpenApiSpec.Operation>): BoundedSchemas => {
  const key = ops.map((op) => op.name).join("\n")
  const byOps = measured.get(doc) ?? new Map<string, BoundedSchemas>()
  measured.set(doc, byOps)
  const hit = byOps.get(key)
  if (hit !== undefined) return hit
  const bounded = boundedInputSchemas(ops)
  byOps.set(key, bounded)
  return bounded
}

/** Read-only calls share this many permits; any other call takes them all. */
const Permits = 1_024

export const connectAll = (options: {
  readonly principal: Principal
  /** Sent as the run's headers on every request made for it (RunHeaders). */
  readonly run: RunIdentity
  readonly connections: ReadonlyArray<PlannedHttpConnection>
  readonly fetch: GuardedFetch
  readonly cache: SpecCache
  /** Outbound.permitsShape: whether a base URL may be requested. */
  readonly permits: (url: string) => URL | undefined
  readonly reveal: (
    principal: Principal,
    secretId: SecretId,
    field: string
  ) => Effect.Effect<Redacted.Redacted, unknown>
}): Effect.Effect<HttpToolset> =>
  Effect.gen(function*() {
    const specs: Array<ToolSpec> = []
    const unavailable: Array<{ connectionId: string; name: string; errorCode: string; message: string }> = []
    const routes = new Map<
      string,
      {
        readonly connection: PlannedHttpConnection
        readonly op: OpenApiSpec.Operation
        readonly doc: OpenAPI.Document
        readonly baseUrl: string
        readonly trusted: boolean
        readonly requiredSkills: ReadonlyArray<string>
      }
    >()
    const lanes = yield* Semaphore.make(Permits)
    const deferred = new Set<string>()
    for (const connection of options.connections) {
      if (!connection.config.enabled) {
        unavailable.push({
          connectionId: connection.id,
          name: connection.name,
          errorCode: "policy_denied",
          message: "The connection is disabled."
        })
        continue
      }
      const loaded = yield* options.cache.load(
        connection.id,
        connection.configVersion,
        connection.config.spec,
        connection.config.requestTimeoutMs
      ).pipe(Effect.result)
      if (loaded._tag === "Failure") {
        unavailable.push({
          connectionId: connection.id,
          name: connection.name,
          errorCode: loaded.failure.errorCode,
          message: loaded.failure.message
        })
        continue
      }
      const baseUrl = OpenApiSpec.resolveBaseUrl(loaded.success, connection.config.baseUrl, options.permits)
      if (baseUrl === undefined) {
        unavailable.push({
          connectionId: connection.id,
          name: connection.name,
          errorCode: "base_url_missing",
          message: "No usable base URL."
        })
        continue
      }
      const doc = loaded.success.document
      const exposed = exposedOperations(
        connection.name,
        OpenApiSpec.operations(doc),
        connection.config.allowedOperations
      )
      // Past the schema bounds the document is refused for the turn, as one that does not parse.
      const bounded = boundedSchemas(doc, exposed.map((e) => e.operation))
      if (bounded._tag === "Refused") {
        unavailable.push({
          connectionId: connection.id,
          name: connection.name,
          errorCode: "spec_invalid",
          message: `The document cannot be used: ${bounded.message}.`
        })
        continue
      }
      for (const [i, { operation, ref }] of exposed.entries()) {
        const description = operation.summary ?? operation.description ??
          `${operation.method.toUpperCase()} ${operation.path}`
        specs.push({
          name: ref.namespacedName,
          description: description.slice(0, ToolLimits.maxDescriptionChars),
          inputSchema: bounded.schemas[i] ?? {}
        })
        // x-svc-trusted: false forces the envelope; true never elevates an untrusted connection (rule 7).
        const trusted = connection.config.trusted && asRecord(operation.operation)["x-svc-trusted"] !== false
        const defer = asRecord(operation.operation)["x-svc-defer"]
        if (typeof defer === "boolean" ? defer : connection.config.defer !== false) deferred.add(ref.namespacedName)
        const skills = asRecord(operation.operation)["x-svc-required-skills"] ?? connection.config.requiredSkills
        routes.set(ref.namespacedName, {
          connection,
          op: operation,
          doc,
          baseUrl,
          trusted,
          requiredSkills: ToolResults.skillList(skills)
        })
      }
    }

    const call = (name: string, input: unknown): Effect.Effect<ToolOutcome.ToolOutcome> | undefined => {
      const route = routes.get(name)
      if (route === undefined) return undefined
      const { connection, op, doc, baseUrl, trusted } = route
      const permits = asRecord(op.operation)["x-svc-read-only"] === true ? 1 : Permits
      return Semaphore.withPermits(lanes, permits)(Effect.gen(function*() {
        const request = buildRequest(baseUrl, op, asRecord(input))
        const auth = connection.config.auth
        // Masked in whatever comes back, should the upstream echo it.
        const credentials: Array<string> = []
        if (auth.type === "bearer") {
          // The credential is only ever attached for the exact bound origin (rule 5).
          const bound = connection.config.baseUrl === null ? undefined : new URL(connection.config.baseUrl).origin
          if (bound === undefined || request.url.origin !== bound) {
            return ToolOutcome.failure(
              "credential_not_bound",
              `the request to ${request.url.origin} was refused: the credential is bound to ${bound ?? "no origin"}.`
            )
          }
          const token = Redacted.value(
            yield* options.reveal(options.principal, auth.secretId, "auth.secretId").pipe(Effect.orDie)
          )
          credentials.push(token)
          const placement = placementOf(doc, op)
          if (placement.in === "authorization") request.headers["authorization"] = `${placement.scheme} ${token}`
          else if (placement.in === "header") request.headers[placement.name.toLowerCase()] = token
          else if (placement.in === "query") request.url.searchParams.set(placement.name, token)
          else {request.headers["cookie"] = [
              request.headers["cookie"],
              `${placement.name}=${encodeURIComponent(token)}`
            ].filter(Boolean).join("; ")}
        }
        const credentialHeaders = auth.type === "bearer" ? credentialHeaderOf(placementOf(doc, op)) : []
        const response = yield* Effect.tryPromise({
          try: async (signal) => {
            const r = await options.fetch(request.url, {
              credentialHeaders,
              method: op.method.toUpperCase(),
              headers: { ...request.headers, ...runHeaders(options.run) },
              ...(request.body === undefined ? {} : { body: request.body }),
              signal
            })
            return { status: r.status, statusText: r.statusText, text: await r.text() }
          },
          catch: (cause) => new Error(errorText(cause))
        }).pipe(
          Effect.timeoutOrElse({
            duration: Duration.millis(connection.config.requestTimeoutMs),
            orElse: () => Effect.fail(new Error(`no response within ${connection.config.requestTimeoutMs} ms`))
          }),
          Effect.result
        )
        if (response._tag === "Failure") {
          return maskOutcome(ToolOutcome.failure("http_request_failed", response.failure.message), credentials)
        }
        const { status, statusText, text } = response.success
        const body = Option.getOrElse(decodeJson(text), () => text)
        const output = { status, statusText, body }
        // A non-2xx answer is returned to the model as it came (rule 3); a 4xx/5xx is shown as an expected failure (spec 6.2).
        const outcome = status < 400
          ? ToolOutcome.success(output)
          : ToolOutcome.failure("http_error", `HTTP ${status} ${statusText}`.trim(), output, {
            text: JSON.stringify(output)
          })
        return ToolResults.shape(
          name,
          maskOutcome(outcome, credentials),
          {
            trusted,
            resultCapBytes: connection.config.resultCapBytes
          }
        )
      }))
    }

    const policyOf = (name: string): ToolPolicyRef | undefined => {
      const route = routes.get(name)
      return route === undefined
        ? undefined
        : {
          approval: route.connection.config.approval,
          gatedTools: route.connection.config.gatedTools,
          originalName: route.op.name
        }
    }

    return {
      specs,
      unavailable,
      call,
      policyOf,
      untrusted: [...routes.values()].some((r) => !r.trusted),
      requiredSkillsOf: (name) => routes.get(name)?.requiredSkills ?? [],
      deferred
    }
  })
