/**
 * Result handlers registered on the test's HookServer, and what a customer's
 * handler checks on each dispatch it receives (spec 6.1): every header, the
 * signature (with Stripe's verifier), and the body.
 */
import { assert } from "@effect/vitest"
import { Effect, Schema } from "effect"
import type { ResultHandlerId } from "../../domain/Ids.ts"
import type { DispatchRequest } from "../../src/resultHandlers/ResultDispatch.ts"
import * as Collection from "./Collection.ts"
import { agentWithThread, send } from "./Conversation.ts"
import * as HookServer from "./HookServer.ts"
import { parseJson } from "./TestServer.ts"

/** A result handler posting to the HookServer at `/handlers/<name>`, with its signing secret. */
export const createHandler = (overrides: Record<string, unknown> = {}, key?: string) =>
  Effect.gen(function*() {
    const server = yield* HookServer.HookServer
    const name = Collection.uniqueName("archive")
    const secret = `whsec_${name}_signing_secret`
    const handler = yield* Collection.resultHandlers.create(
      { kind: "artifact", name, url: `${server.origin}/handlers/${name}`, secret, ...overrides },
      key
    )
    return { handler, secret, path: `/handlers/${name}` }
  })

/** The requests the HookServer received after the first `before`. */
export const receivedSince = (before: number) =>
  Effect.map(Effect.flatMap(HookServer.HookServer, (s) => s.received), (all) => all.slice(before))

export const DispatchBody = Schema.Struct({
  runId: Schema.String,
  threadId: Schema.String,
  agentId: Schema.String,
  toolName: Schema.String,
  toolCallId: Schema.String,
  stepNumber: Schema.Number,
  mediaType: Schema.String,
  bytes: Schema.Number,
  sha256: Schema.String,
  content: Schema.Unknown
})
export type DispatchBody = typeof DispatchBody.Type

export interface Expected {
  readonly path: string
  readonly secret: string
  /** The service's clock when it signed (TestClock). */
  readonly sentAtMs: number
  readonly requestId: string
  readonly organizationId: string
  readonly agentId: string
  readonly runId: string
  readonly handlerId: string
}

/** Asserts one dispatch as a handler receives it: method, path, every 6.1 header, a valid signature; returns the body. */
export const checkDispatch = (received: HookServer.Received, expected: Expected) =>
  Effect.gen(function*() {
    const { header, verify } = HookServer
    assert.strictEqual(received.method, "POST")
    assert.strictEqual(received.path, expected.path)
    assert.strictEqual(header(received, "content-type"), "application/json")
    const t = Math.floor(expected.sentAtMs / 1000)
    assert.match(header(received, "svc-signature"), new RegExp(`^t=${t},v1=[0-9a-f]{64}$`))
    assert.strictEqual(header(received, "svc-timestamp"), String(t))
    assert.strictEqual(header(received, "svc-request-id"), expected.requestId)
    assert.match(expected.requestId, /^req_[0-9A-Za-z]{22}$/)
    assert.strictEqual(header(received, "svc-org-id"), expected.organizationId)
    assert.strictEqual(header(received, "svc-agent-id"), expected.agentId)
    assert.strictEqual(header(received, "svc-run-id"), expected.runId)
    assert.strictEqual(header(received, "svc-result-handler-id"), expected.handlerId)
    assert.strictEqual(header(received, "svc-result-kind"), "artifact")
    // What Stripe's verifier hands back is the body the signature covers.
    assert.deepStrictEqual(verify(received, expected.secret, expected.sentAtMs), parseJson(received.body))
    const body = yield* Schema.decodeUnknownEffect(DispatchBody)(parseJson(received.body)).pipe(Effect.orDie)
    assert.deepStrictEqual(Object.keys(parseJson(received.body) ?? {}).sort(), Object.keys(DispatchBody.fields).sort())
    return body
  })

const owner = { organizationId: "org_acme", workspaceId: "prod" }
export const png = Buffer.from("not really a png").toString("base64")

/** A dispatch request for `handlerId` about a real run (the journal keeps answers per run), with a fresh request key. */
export const requestFor = (handlerId: ResultHandlerId, overrides: Partial<DispatchRequest> = {}) =>
  Effect.gen(function*() {
    const { agent, thread } = yield* agentWithThread()
    const { runId } = yield* send(thread.id, "hello")
    return {
      handlerId,
      owner,
      runId,
      threadId: thread.id,
      agentId: agent.id,
      toolName: "workspace_export_artifact",
      toolCallId: "tc_0000000000000000000001",
      stepNumber: 2,
      mediaType: "image/png",
      bytes: 16,
      sha256: "0".repeat(64),
      content: { kind: "base64", base64: png, mimeType: "image/png" },
      purpose: "export",
      requestKey: `${runId}:tc_0000000000000000000001:export`,
      ...overrides
    } satisfies DispatchRequest
  })
