/**
 * Resolution and checks of the policy fields tool servers and HTTP
 * connections share (4.6 table and rules): defaults, gatedTools needing an
 * approval mode other than 'never', bearer secrets of the same workspace.
 */
import { Effect } from "effect"
import { InvalidRequest } from "../../domain/Errors.ts"
import type { Principal } from "../../domain/Principal.ts"
import { type AuthInput, ToolLimits, type ToolPolicy } from "../../domain/ToolPolicy.ts"

/** What create and update bodies may carry (update adds nulls). */
export interface PolicyInput {
  readonly auth?: AuthInput | undefined
  readonly approval?: ToolPolicy["approval"] | undefined
  readonly gatedTools?: ToolPolicy["gatedTools"] | undefined
  readonly resultCapBytes?: number | undefined
  readonly trusted?: boolean | undefined
  readonly defer?: boolean | null | undefined
  readonly requiredSkills?: ToolPolicy["requiredSkills"] | undefined
  readonly enabled?: boolean | undefined
  readonly requestTimeoutMs?: number | null | undefined
}

export const DefaultPolicy: ToolPolicy = {
  auth: { type: "none" },
  approval: null,
  gatedTools: null,
  resultCapBytes: ToolLimits.resultCapBytes.default,
  trusted: false,
  defer: null,
  requiredSkills: null,
  enabled: true,
  requestTimeoutMs: ToolLimits.requestTimeoutMs.default
}

const pick = <A>(patch: A | undefined, current: A): A => (patch === undefined ? current : patch)

/**
 * Applies `input` over `current` and checks the result. `requireSecret`
 * checks that a bearer secret exists in the caller's workspace.
 */
export const resolvePolicy = (
  principal: Principal,
  current: ToolPolicy,
  input: PolicyInput,
  requireSecret: (principal: Principal, id: string, field: string) => Effect.Effect<unknown, InvalidRequest>
): Effect.Effect<ToolPolicy, InvalidRequest> =>
  Effect.gen(function*() {
    const policy: ToolPolicy = {
      auth: pick(input.auth, current.auth),
      approval: pick(input.approval, current.approval),
      gatedTools: pick(input.gatedTools, current.gatedTools),
      resultCapBytes: pick(input.resultCapBytes, current.resultCapBytes),
      trusted: pick(input.trusted, current.trusted),
      defer: pick(input.defer, current.defer),
      requiredSkills: pick(input.requiredSkills, current.requiredSkills),
      enabled: pick(input.enabled, current.enabled),
      requestTimeoutMs: input.requestTimeoutMs === undefined
        ? current.requestTimeoutMs
        : input.requestTimeoutMs ?? ToolLimits.requestTimeoutMs.default
    }
    if (policy.gatedTools !== null && (policy.approval === null || policy.approval === "never")) {
      return yield* InvalidRequest.forField(
        "gatedTools",
        "gatedTools requires an approval mode of 'once' or 'always' (it cannot be combined with 'never' or no approval)."
      )
    }
    if (policy.auth.type === "bearer" && input.auth !== undefined) {
      yield* requireSecret(principal, policy.auth.secretId, "auth.secretId")
    }
    return policy
  })

/** `allowedTools` / `blockedTools`-style exclusive pair: switching modes needs the old one cleared with null. */
export const resolveExclusive = <A>(
  names: readonly [allowed: string, blocked: string],
  current: readonly [A | null, A | null],
  patch: readonly [A | null | undefined, A | null | undefined]
): readonly [A | null, A | null] | InvalidRequest => {
  const allowed = patch[0] === undefined ? current[0] : patch[0]
  const blocked = patch[1] === undefined ? current[1] : patch[1]
  if (allowed !== null && blocked !== null) {
    const field = patch[1] !== undefined && patch[1] !== null ? names[1] : names[0]
    return InvalidRequest.forField(
      field,
      `${names[0]} and ${names[1]} are mutually exclusive; to switch, set the other one to null in the same request.`
    )
  }
  return [allowed, blocked]
}

/** Canonical model-facing name, or undefined when it would be illegal or longer than 64 characters. */
export const namespacedToolName = (prefix: "mcp" | "api", connection: string, tool: string): string | undefined => {
  const name = `${prefix}__${connection}__${tool}`
  return ToolLimits.toolNamePattern.test(name) ? name : undefined
}
