/**
 * Each operation of the OpenAPI document lists the error statuses it can
 * answer, and only those: what its service can fail with (declared on the
 * endpoint, `error: [...]`) plus what the middleware in front of it answers
 * (400 a request that does not decode; 401 and 429 behind an API key). Every
 * listed status is the error envelope. A handler cannot fail with a status
 * its endpoint does not declare: that does not compile (last test).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { HttpApiBuilder, OpenApi } from "effect/http-api"
import { NotFound } from "../../domain/Errors.ts"
import { Api } from "../../http/Api.ts"
import { authed } from "../../http/ApiMiddleware.ts"

const spec = OpenApi.fromApi(Api)

const methods = ["get", "post", "put", "patch", "delete"] as const

const operations = Object.entries(spec.paths).flatMap(([path, item]) =>
  methods.flatMap((method) => {
    const op = item[method]
    return op === undefined ? [] : [{ name: `${method.toUpperCase()} ${path}`, path, op }]
  })
)

const operation = (name: string) => {
  const found = operations.find((o) => o.name === name)
  assert.isDefined(found, name)
  return found!.op
}

const errorStatuses = (op: OpenApi.OpenAPISpecOperation): ReadonlyArray<number> =>
  Object.keys(op.responses).map(Number).filter((status) => status >= 400).sort((a, b) => a - b)

/** The envelope class (its OpenAPI identifier) of each status. */
const envelopes: Record<number, string> = {
  400: "InvalidRequestError",
  401: "AuthenticationError",
  403: "PermissionError",
  404: "NotFoundError",
  409: "ConflictError",
  413: "PayloadTooLargeError",
  429: "RateLimitError",
  502: "BadGatewayError",
  503: "ServiceUnavailableError"
}

describe("the error statuses of the OpenAPI document", () => {
  it.each(
    [
      // No resource by id, no service failure: the middleware's statuses only.
      ["GET /v1/bands", [400, 401, 429]],
      ["GET /v1/agents", [400, 401, 429]],
      // One resource by id: another workspace's is 403, an unknown one 404.
      ["GET /v1/agents/{id}", [400, 401, 403, 404, 429]],
      ["DELETE /v1/agents/{id}", [400, 401, 403, 404, 429]],
      // A thread's workspace files: 409 workspace_unavailable without a workspace (or its files on another node).
      ["GET /v1/threads/{id}/workspace/files", [400, 401, 403, 404, 409, 429]],
      ["GET /v1/threads/{id}/workspace/files/content", [400, 401, 403, 404, 409, 429]],
      // A hook agents still use is 409 resource_in_use.
      ["DELETE /v1/tool-approval-hooks/{id}", [400, 401, 403, 404, 409, 429]],
      // A body: 413 over the limit; an idempotency key: 409 another body under it, 503 the first still running.
      ["POST /v1/agents", [400, 401, 403, 409, 413, 429, 503]],
      ["PATCH /v1/agents/{id}", [400, 401, 403, 404, 413, 429]],
      ["POST /v1/threads/{id}/messages", [400, 401, 403, 404, 409, 413, 429, 503]],
      // Tests reach a peer: 502 when it fails; they take an idempotency key too.
      ["POST /v1/tool-servers/{id}/test", [400, 401, 403, 404, 409, 429, 502, 503]],
      // No API key: the signed URL is the grant, so no 401 and no rate limit.
      ["GET /v1/artifacts/{id}/download", [400, 403, 404, 503]]
    ] as const
  )("%s lists exactly %j", (name, statuses) => {
    assert.deepStrictEqual(errorStatuses(operation(name)), statuses)
  })

  it("answers every listed error status with the envelope", () => {
    const wrong = operations.flatMap(({ name, op }) =>
      errorStatuses(op).flatMap((status) => {
        const response = op.responses[status]
        const ref = response?.content?.["application/json"]?.schema
        const expected = `#/components/schemas/${envelopes[status]}Encoded`
        const component = spec.components.schemas[`${envelopes[status]}Encoded`]
        return response?.description === envelopes[status] && ref !== undefined && "$ref" in ref &&
            ref.$ref === expected && component !== undefined
          ? []
          : [`${name} ${status}`]
      })
    )
    assert.deepStrictEqual(wrong, [])
    for (const identifier of Object.values(envelopes)) {
      assert.deepStrictEqual(spec.components.schemas[`${identifier}Encoded`], {
        type: "object",
        properties: { error: { $ref: "#/components/schemas/ErrorBody" } },
        required: ["error"],
        additionalProperties: false
      }, identifier)
    }
    assert.deepStrictEqual(spec.components.schemas["ErrorBody"]?.required, ["type", "code", "message", "request_id"])
  })

  it("lists 400 everywhere, 401 and 429 behind an API key, 404 with an id in the path, 413 with a body", () => {
    // The runners' routes authenticate with an environment's token (401 when it is not one), and answer a call
    // that is no longer the runner's `accepted: false` rather than 404 (docs/guide/remote-workspaces.md).
    const runnerRoutes = ["/v1/environments/connect", "/v1/environments/calls/{callId}/result"]
    const missing = operations.filter(({ path }) => !runnerRoutes.includes(path)).flatMap(({ name, path, op }) => {
      const listed = errorStatuses(op)
      const keyed = op.security.length > 0
      const wanted = [
        400,
        ...(keyed ? [401, 429] : []),
        ...(path.includes("{") ? [404] : []),
        ...(op.requestBody !== undefined ? [413] : [])
      ]
      const unknown = listed.filter((status) => envelopes[status] === undefined)
      return [
        ...wanted.filter((status) => !listed.includes(status)).map((status) => `${name}: no ${status}`),
        ...(keyed ? [] : listed.filter((s) => s === 401 || s === 429).map((s) => `${name}: ${s} without a key`)),
        ...unknown.map((status) => `${name}: ${status} is no envelope`)
      ]
    })
    assert.deepStrictEqual(missing, [])
  })

  it("does not compile a handler failing with a status its endpoint does not declare", () => {
    const bands = HttpApiBuilder.group(Api, "bands", (handlers) =>
      Effect.succeed(
        // @ts-expect-error GET /v1/bands declares no 404, so a NotFound from its service is refused
        handlers.handle("list", () => authed(() => Effect.fail(NotFound.of("band", "lite"))))
      ))
    assert.isDefined(bands)
  })
})
