/**
 * The agent's code-hosting grant as a pure check (spec 2.1.1 `codehost`, 4.1
 * rule 7, 4.8 "Agent grant"): a grant, the agent's workspace and whether a
 * code-hosting app is configured -> accepted, or the exact 400 (code, field,
 * message). What needs the store (the connection, repositories within its
 * grant) is test/api/CodehostGrant.test.ts's.
 */
import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import type { AgentConfig } from "../../../domain/Agent.ts"
import { CodehostConnectionId } from "../../../domain/Ids.ts"
import { checkCodehostGrant } from "../../../src/agents/CodehostGrantRules.ts"

type Grant = NonNullable<AgentConfig["capabilities"]["codehost"]>
type Workspace = AgentConfig["workspace"]

interface Row {
  readonly name: string
  readonly grant: Omit<Grant, "connectionId">
  /** Default: a managed workspace with filesystem, shell and the public network. */
  readonly workspace?: Workspace
  /** Default: a code-hosting app is configured. */
  readonly configured?: boolean
  /** undefined: accepted; else the field, the message and the code (default invalid_request_error). */
  readonly refused?: readonly [field: string, message: string, code?: string]
}

const workspace = { type: "managed", filesystem: true, shell: true, documents: false, mediaEditing: false } as const
const needsWorkspace =
  "The codehost capability requires a managed workspace with filesystem, shell and a network mode that is not offline."
const field = (path: string) => `capabilities.codehost${path}`

const rows: ReadonlyArray<Row> = [
  { name: "a bare grant on a managed workspace is accepted", grant: {} },
  {
    name: "a full grant is accepted: repositories, gated write tools under 'once', allowed tools, branches",
    grant: {
      repositories: ["acme/api", "acme/web.site"],
      approval: "once",
      gatedTools: ["codehost_push_branch", "codehost_merge_pull_request"],
      allowedTools: ["codehost_get_issue", "codehost_checkout", "codehost_push_branch"],
      git: { branchPrefix: "agent/", baseBranches: ["main", "release/1.x"] }
    }
  },
  {
    name: "blockedTools alone is accepted",
    grant: { blockedTools: ["codehost_merge_pull_request"], approval: "never" }
  },
  // the workspace
  { name: "no workspace", grant: {}, workspace: null, refused: [field(""), needsWorkspace] },
  {
    name: "a remote workspace",
    grant: {},
    workspace: { type: "remote", environmentId: "env_1", filesystem: true, shell: true },
    refused: [field(""), needsWorkspace]
  },
  {
    name: "a workspace without filesystem",
    grant: {},
    workspace: { ...workspace, filesystem: false, shell: false },
    refused: [field(""), needsWorkspace]
  },
  {
    name: "a workspace without shell",
    grant: {},
    workspace: { ...workspace, shell: false },
    refused: [field(""), needsWorkspace]
  },
  {
    name: "an offline workspace",
    grant: {},
    workspace: { ...workspace, network: { mode: "offline" } },
    refused: [field(""), needsWorkspace]
  },
  {
    name: "a restricted network is enough",
    grant: {},
    workspace: { ...workspace, network: { mode: "restricted", allowDomains: ["github.com"] } }
  },
  // tool lists
  {
    name: "allowedTools and blockedTools together",
    grant: { allowedTools: ["codehost_get_issue"], blockedTools: ["codehost_merge_pull_request"] },
    refused: [field(".blockedTools"), "allowedTools and blockedTools are mutually exclusive."]
  },
  ...[{}, { approval: "never" as const }].map((mode): Row => ({
    name: `gatedTools with approval ${JSON.stringify(mode)}`,
    grant: { ...mode, gatedTools: ["codehost_push_branch"] },
    refused: [
      field(".gatedTools"),
      "gatedTools narrows an explicit 'once' or 'always' approval mode; set approval accordingly."
    ]
  })),
  {
    name: "the deployment has no code-hosting app (checked after the shape of the grant, before the names)",
    grant: { repositories: ["not a repo"] },
    configured: false,
    refused: [
      field(""),
      "No code-hosting app is configured on this deployment, so no code-hosting connection can back this capability.",
      "codehost_unconfigured"
    ]
  },
  {
    name: "a repository that is not 'owner/name'",
    grant: { repositories: ["acme/api", "not a repo"] },
    refused: [field(".repositories[1]"), "'not a repo' is not a repository name 'owner/name'."]
  },
  {
    name: "a repository listed twice (case-insensitively)",
    grant: { repositories: ["acme/api", "ACME/api"] },
    refused: [field(".repositories[1]"), "'ACME/api' is listed twice."]
  },
  {
    name: "an allowed tool not in the catalog",
    grant: { allowedTools: ["codehost_get_issue", "get_issue"] },
    refused: [
      field(".allowedTools[1]"),
      "'get_issue' is not a code-hosting tool (names come from the catalog, e.g. 'codehost_get_issue')."
    ]
  },
  {
    name: "a blocked tool not in the catalog",
    grant: { blockedTools: ["codehost_nope"] },
    refused: [
      field(".blockedTools[0]"),
      "'codehost_nope' is not a code-hosting tool (names come from the catalog, e.g. 'codehost_get_issue')."
    ]
  },
  {
    name: "a gated read tool",
    grant: { approval: "always", gatedTools: ["codehost_push_branch", "codehost_get_issue"] },
    refused: [
      field(".gatedTools[1]"),
      "'codehost_get_issue' is a read tool; gatedTools names write tools (reads need no approval)."
    ]
  },
  // branches
  ...["bad..prefix", "-agent", ".hidden/"].map((branchPrefix): Row => ({
    name: `a branch prefix git refuses: '${branchPrefix}'`,
    grant: { git: { branchPrefix } },
    refused: [field(".git.branchPrefix"), `'${branchPrefix}' cannot start a branch name git accepts.`]
  })),
  ...["ma in", "main.lock", "feature/", "a@{b"].map((base): Row => ({
    name: `a base branch git refuses: '${base}'`,
    grant: { git: { baseBranches: ["main", base] } },
    refused: [field(".git.baseBranches[1]"), `'${base}' is not a branch name git accepts.`]
  }))
]

describe("CodehostGrantRules", () => {
  it.each(rows)("$name", (row) => {
    const broken = checkCodehostGrant(
      { connectionId: Schema.decodeSync(CodehostConnectionId)("chc_1"), ...row.grant },
      row.workspace === undefined ? workspace : row.workspace,
      row.configured ?? true
    )
    assert.deepStrictEqual(
      broken === undefined ? undefined : { code: broken.code, message: broken.message, details: broken.details },
      row.refused === undefined ? undefined : {
        code: row.refused[2] ?? "invalid_request_error",
        message: row.refused[1],
        details: { field: row.refused[0] }
      }
    )
  })
})
