/**
 * How a configuration resolves (spec 2.1, 4.1 update rules 1-4) without a
 * server: a create body -> every field at its effective value, and a PATCH
 * over it -> partial updates, replace semantics for capabilities and
 * workspace, carry-forward of a managed workspace's documents and
 * mediaEditing, nulls restoring defaults. The rules that refuse a
 * configuration are AgentConfigRules.test.ts's.
 */
import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { type AgentConfig, type AgentCreate, type AgentPatch, DefaultPolicies } from "../../../domain/Agent.ts"
import { InvalidRequest } from "../../../domain/Errors.ts"
import { ResultHandlerId } from "../../../domain/Ids.ts"
import { applyPatch, buildConfig } from "../../../src/agents/AgentConfigRules.ts"

interface Row {
  readonly name: string
  readonly create: AgentCreate
  /** Applied over the created configuration. */
  readonly patch?: AgentPatch
  /** The fields of the result that the row is about; an InvalidRequest's code, message and details if refused. */
  readonly expected: Partial<AgentConfig> | { readonly refused: unknown }
}

/** A managed workspace as resolved from `{ type: "managed" }`: no document or media-editing runtime asked for. */
const handlerId = Schema.decodeSync(ResultHandlerId)("rh_1")
const noRuntimes = { documents: false, mediaEditing: false } as const
const resolvedManaged = { type: "managed", filesystem: true, shell: true, ...noRuntimes } as const

const rows: ReadonlyArray<Row> = [
  {
    name: "an empty body resolves every field to its default",
    create: {},
    expected: {
      context: [],
      band: "core",
      capabilities: {},
      artifacts: { stream: { urls: "durable-only" } },
      workspace: null,
      approvals: null,
      policies: DefaultPolicies
    }
  },
  {
    name: "a context string is one block",
    create: { context: "Be brief." },
    expected: { context: [{ content: "Be brief." }] }
  },
  { name: "an empty context string is no block", create: { context: "" }, expected: { context: [] } },
  {
    name: "workspace: filesystem defaults to true, shell to filesystem, documents and mediaEditing to false",
    create: { workspace: { type: "managed" } },
    expected: { workspace: resolvedManaged }
  },
  {
    name: "workspace: without filesystem, shell defaults to false",
    create: { workspace: { type: "managed", filesystem: false } },
    expected: { workspace: { ...resolvedManaged, filesystem: false, shell: false } }
  },
  {
    name: "workspace: shell off keeps filesystem on",
    create: { workspace: { type: "managed", shell: false } },
    expected: { workspace: { ...resolvedManaged, shell: false } }
  },
  {
    name: "workspace: listing preview ports turns previews on",
    create: { workspace: { type: "managed", previews: { ports: [3000] } } },
    expected: { workspace: { ...resolvedManaged, previews: { ports: [3000], enabled: true } } }
  },
  {
    name: "workspace: previews without ports stay off unless enabled",
    create: { workspace: { type: "managed", previews: {} } },
    expected: { workspace: { ...resolvedManaged, previews: { enabled: false } } }
  },
  {
    name: "a remote workspace resolves filesystem and shell only",
    create: { workspace: { type: "remote", environmentId: "env_1" } },
    expected: { workspace: { type: "remote", environmentId: "env_1", filesystem: true, shell: true } }
  },
  {
    name: "artifacts without a stream projection get 'durable-only'",
    create: { artifacts: { exports: { resultHandlerId: handlerId } } },
    expected: { artifacts: { exports: { resultHandlerId: handlerId }, stream: { urls: "durable-only" } } }
  },
  {
    name: "create policies: omitted fields take their defaults",
    create: { policies: { maxStepsDefault: 12 } },
    expected: { policies: { ...DefaultPolicies, maxStepsDefault: 12 } }
  },
  // PATCH
  {
    name: "PATCH: omitted fields keep their value",
    create: { band: "lite", capabilities: { web: false }, approvals: { autoAllow: ["read_file"] } },
    patch: { context: "New context." },
    expected: {
      band: "lite",
      capabilities: { web: false },
      approvals: { autoAllow: ["read_file"] },
      context: [{ content: "New context." }]
    }
  },
  {
    name: "PATCH: capabilities are replaced, not merged",
    create: { capabilities: { web: false, subagents: true } },
    patch: { capabilities: { userInteraction: true } },
    expected: { capabilities: { userInteraction: true } }
  },
  {
    name: "PATCH: a workspace is replaced (omitted sub-fields are gone, booleans resolved again)",
    create: { workspace: { type: "managed", shell: false, resources: "large" } },
    patch: { workspace: { type: "managed", filesystem: false } },
    expected: { workspace: { ...resolvedManaged, filesystem: false, shell: false } }
  },
  {
    name: "PATCH: documents and mediaEditing carry forward from the previous managed workspace",
    create: { workspace: { type: "managed", documents: true, mediaEditing: true } },
    patch: { workspace: { type: "managed", mediaEditing: false } },
    expected: { workspace: { ...resolvedManaged, documents: true } }
  },
  {
    name: "PATCH: nothing carries forward from a remote workspace",
    create: { workspace: { type: "remote", environmentId: "env_1" } },
    patch: { workspace: { type: "managed" } },
    expected: { workspace: resolvedManaged }
  },
  {
    name: "PATCH: workspace null removes the workspace",
    create: { workspace: { type: "managed" } },
    patch: { workspace: null },
    expected: { workspace: null }
  },
  {
    name: "PATCH: policies patch per field",
    create: { policies: { maxStepsDefault: 10, mediaFidelity: "spatial" } },
    patch: { policies: { dataHandling: "strict" } },
    expected: {
      policies: { ...DefaultPolicies, maxStepsDefault: 10, mediaFidelity: "spatial", dataHandling: "strict" }
    }
  },
  {
    name: "PATCH: null on mediaFidelity or dataHandling restores 'standard'; on a limit, none",
    create: { policies: { maxStepsDefault: 10, mediaFidelity: "spatial", dataHandling: "strict" } },
    patch: { policies: { maxStepsDefault: null, mediaFidelity: null, dataHandling: null } },
    expected: { policies: DefaultPolicies }
  },
  {
    name: "PATCH: policies null restores every default",
    create: { policies: { maxStepsDefault: 10, maxDurationMsDefault: 60_000, dataHandling: "strict" } },
    patch: { policies: null },
    expected: { policies: DefaultPolicies }
  },
  {
    name: "PATCH: artifacts null restores the default projection",
    create: { artifacts: { stream: { urls: "include-svc-signed" } } },
    patch: { artifacts: null },
    expected: { artifacts: { stream: { urls: "durable-only" } } }
  },
  {
    name: "PATCH: approvals null removes them",
    create: { approvals: { autoAllow: ["read_file"] } },
    patch: { approvals: null },
    expected: { approvals: null }
  },
  {
    name: "PATCH: a context that breaks a rule is refused",
    create: {},
    patch: { context: [{ id: "a", content: "x" }, { id: "a", content: "y" }] },
    expected: {
      refused: {
        code: "invalid_request_error",
        message: "Duplicate context block id 'a'.",
        details: { field: "context[1].id" }
      }
    }
  }
]

/** The fields of `config` named in `expected` (or the refusal), to compare with the row. */
const outcome = (row: Row): unknown => {
  const created = buildConfig(row.create)
  const config = created instanceof InvalidRequest || row.patch === undefined ? created : applyPatch(created, row.patch)
  if (config instanceof InvalidRequest) {
    return { refused: { code: config.code, message: config.message, details: config.details } }
  }
  return Object.fromEntries(Object.keys(row.expected).map((key) => [key, config[key as keyof AgentConfig]]))
}

describe("AgentConfigRules: resolution", () => {
  it.each(rows)("$name", (row) => {
    assert.deepStrictEqual(outcome(row), row.expected)
  })
})
