/**
 * The policy fields tool servers and HTTP connections share (spec 4.6), as
 * tables without a server: a PATCH or create body over the current policy ->
 * the resolved policy or the exact 400; the allowed/blocked pair; canonical
 * tool names. The bearer secret's existence is the one lookup: here a
 * workspace holding one secret, `sec_known`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { InvalidRequest } from "../../../domain/Errors.ts"
import { SecretId } from "../../../domain/Ids.ts"
import type { Principal } from "../../../domain/Principal.ts"
import type { ToolPolicy } from "../../../domain/ToolPolicy.ts"
import {
  DefaultPolicy,
  namespacedToolName,
  type PolicyInput,
  resolveExclusive,
  resolvePolicy
} from "../../../src/tools/ToolPolicyRules.ts"

const principal: Principal = { keyId: "key_1", organizationId: "org_1", workspaceId: "prod" }

interface PolicyRow {
  readonly name: string
  readonly current?: Partial<ToolPolicy>
  readonly input: PolicyInput
  /** The resolved policy's fields the row is about, or the refusal's field and message. */
  readonly expected: Partial<ToolPolicy> | { readonly refused: readonly [field: string, message: string] }
  /** The secrets looked up, as `id@field`. */
  readonly lookedUp?: ReadonlyArray<string>
}

const gatedNeedsMode =
  "gatedTools requires an approval mode of 'once' or 'always' (it cannot be combined with 'never' or no approval)."
const bearer = (secretId: string) => ({ type: "bearer", secretId: Schema.decodeSync(SecretId)(secretId) }) as const

const policyRows: ReadonlyArray<PolicyRow> = [
  { name: "an empty body keeps every default", input: {}, expected: DefaultPolicy },
  {
    name: "gatedTools under 'once' is accepted",
    input: { approval: "once", gatedTools: ["write"] },
    expected: { approval: "once", gatedTools: ["write"] }
  },
  {
    name: "gatedTools without an approval mode is refused",
    input: { gatedTools: ["write"] },
    expected: { refused: ["gatedTools", gatedNeedsMode] }
  },
  {
    name: "gatedTools with 'never' is refused",
    input: { approval: "never", gatedTools: ["write"] },
    expected: { refused: ["gatedTools", gatedNeedsMode] }
  },
  {
    name: "switching the mode to 'never' while gatedTools stays set is refused",
    current: { approval: "always", gatedTools: ["write"] },
    input: { approval: "never" },
    expected: { refused: ["gatedTools", gatedNeedsMode] }
  },
  {
    name: "clearing gatedTools with null allows 'never'",
    current: { approval: "always", gatedTools: ["write"] },
    input: { approval: "never", gatedTools: null },
    expected: { approval: "never", gatedTools: null }
  },
  {
    name: "omitted fields keep their current value",
    current: { resultCapBytes: 2_048, trusted: true, requestTimeoutMs: 5_000 },
    input: { enabled: false },
    expected: { resultCapBytes: 2_048, trusted: true, requestTimeoutMs: 5_000, enabled: false }
  },
  {
    name: "requestTimeoutMs null restores the default",
    current: { requestTimeoutMs: 5_000 },
    input: { requestTimeoutMs: null },
    expected: { requestTimeoutMs: 60_000 }
  },
  {
    name: "a bearer secret of the workspace is accepted, looked up once",
    input: { auth: bearer("sec_known") },
    expected: { auth: bearer("sec_known") },
    lookedUp: ["sec_known@auth.secretId"]
  },
  {
    name: "a bearer secret the workspace does not hold is refused",
    input: { auth: bearer("sec_gone") },
    expected: { refused: ["auth.secretId", "No secret 'sec_gone' in this workspace."] },
    lookedUp: ["sec_gone@auth.secretId"]
  },
  {
    name: "a bearer secret already set is not looked up again when auth is not in the body",
    current: { auth: bearer("sec_gone") },
    input: { trusted: true },
    expected: { auth: bearer("sec_gone"), trusted: true }
  }
]

describe("ToolPolicyRules", () => {
  it.effect.each(policyRows)("$name", (row) =>
    Effect.gen(function*() {
      const lookedUp: Array<string> = []
      const requireSecret = (_: Principal, id: string, field: string) =>
        Effect.suspend(() => {
          lookedUp.push(`${id}@${field}`)
          return id === "sec_known"
            ? Effect.void
            : Effect.fail(InvalidRequest.forField(field, `No secret '${id}' in this workspace.`))
        })
      const resolved = yield* Effect.result(
        resolvePolicy(principal, { ...DefaultPolicy, ...row.current }, row.input, requireSecret)
      )
      const actual = resolved._tag === "Failure"
        ? { refused: [resolved.failure.details?.["field"], resolved.failure.message] }
        : Object.fromEntries(Object.keys(row.expected).map((key) => [key, resolved.success[key as keyof ToolPolicy]]))
      assert.deepStrictEqual(actual, row.expected)
      if (resolved._tag === "Failure") assert.strictEqual(resolved.failure.code, "invalid_request_error")
      assert.deepStrictEqual(lookedUp, row.lookedUp ?? [])
    }))

  type Pair = readonly [ReadonlyArray<string> | null, ReadonlyArray<string> | null]
  const exclusiveRows: ReadonlyArray<{
    readonly name: string
    readonly current: Pair
    readonly patch: readonly [ReadonlyArray<string> | null | undefined, ReadonlyArray<string> | null | undefined]
    readonly expected: Pair | string
  }> = [
    { name: "allowed set on a fresh pair", current: [null, null], patch: [["a"], undefined], expected: [["a"], null] },
    {
      name: "an omitted side keeps its value",
      current: [null, ["b"]],
      patch: [undefined, undefined],
      expected: [null, ["b"]]
    },
    {
      name: "switching modes with the other cleared by null",
      current: [["a"], null],
      patch: [null, ["b"]],
      expected: [null, ["b"]]
    },
    {
      name: "both in one body: the blocked side is named",
      current: [null, null],
      patch: [["a"], ["b"]],
      expected: "blockedTools"
    },
    {
      name: "switching to blocked without clearing allowed",
      current: [["a"], null],
      patch: [undefined, ["b"]],
      expected: "blockedTools"
    },
    {
      name: "switching to allowed without clearing blocked",
      current: [null, ["b"]],
      patch: [["a"], undefined],
      expected: "allowedTools"
    }
  ]

  it.each(exclusiveRows)("allowed/blocked: $name", ({ current, patch, expected }) => {
    const result = resolveExclusive(["allowedTools", "blockedTools"], current, patch)
    assert.deepStrictEqual(
      result instanceof InvalidRequest ? { message: result.message, details: result.details } : result,
      typeof expected === "string"
        ? {
          message:
            "allowedTools and blockedTools are mutually exclusive; to switch, set the other one to null in the same request.",
          details: { field: expected }
        }
        : expected
    )
  })

  it.each(
    [
      ["mcp", "files", "read_file", "mcp__files__read_file"],
      ["api", "billing-v2", "getInvoice", "api__billing-v2__getInvoice"],
      ["mcp", "files", "read.file", undefined],
      ["api", "billing", "x".repeat(51), undefined],
      ["api", "billing", "x".repeat(50), `api__billing__${"x".repeat(50)}`]
    ] as const
  )("tool name %s__%s__%s -> %s", (prefix, connection, tool, expected) => {
    assert.strictEqual(namespacedToolName(prefix, connection, tool), expected)
  })
})
