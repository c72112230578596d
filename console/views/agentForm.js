/**
 * The agent editor's fields: every setting of spec 2.1 (context blocks, band,
 * capabilities, artifacts, workspace managed or remote, approvals, policies,
 * metadata), and how an edit becomes a PATCH (replace semantics for
 * capabilities and workspace, null clears artifacts, approvals and policy
 * fields, a metadata key removed is sent as null).
 */
import { isRecord } from "./paths.js"

/** @typedef {import("./form.js").Group} Group */
/** @typedef {ReadonlyArray<readonly [string, string]>} Options */

const approval = /** @type {Options} */ ([["once", "once"], ["always", "always"], ["never", "never"]])

/**
 * @param {{ bands: Options, toolServers: Options, httpConnections: Options, hooks: Options, resultHandlers: Options, secretContexts: Options, codehost: Options }} refs
 * @returns {ReadonlyArray<Group>}
 */
export const agentGroups = (refs) => [
  {
    legend: "Agent",
    fields: [
      { path: "metadata.name", label: "Name", kind: "text", help: "Shown in lists (metadata.name)." },
      { path: "context", label: "Context", kind: "blocks" },
      {
        path: "band",
        label: "Band",
        kind: "select",
        required: true,
        options: refs.bands
      }
    ]
  },
  {
    legend: "Capabilities",
    fields: [
      { path: "capabilities.web", label: "Web search and fetch", kind: "check" },
      { path: "capabilities.userInteraction", label: "Ask the user questions (ask_question)", kind: "check" },
      { path: "capabilities.subagents", label: "Delegate tasks to subagents", kind: "check" },
      { path: "capabilities.browser", label: "Browser", kind: "check" },
      { path: "capabilities.browser.files", label: "Browser: files", kind: "check" },
      { path: "capabilities.browser.tabs", label: "Browser: tabs", kind: "check" },
      {
        path: "capabilities.browser.authenticated.profileKey",
        label: "Browser: authenticated profile key",
        kind: "text"
      },
      { path: "capabilities.media", label: "Media generation (all kinds)", kind: "check" },
      ...["image", "video", "speech", "music", "soundEffect"].map((kind) => (
        /** @type {const} */ ({ path: `capabilities.media.${kind}`, label: `Media: ${kind}`, kind: "check" })
      )),
      {
        path: "capabilities.mediaView.output",
        label: "Media view output",
        kind: "select",
        options: [["analysis", "analysis"], ["auto", "auto"]]
      },
      { path: "capabilities.mcp.toolServerIds", label: "Tool servers (MCP)", kind: "ids", options: refs.toolServers },
      {
        path: "capabilities.http.connectionIds",
        label: "HTTP connections",
        kind: "ids",
        options: refs.httpConnections
      },
      {
        path: "capabilities.skills",
        label: "Skills (JSON array of { name, description, body, frontmatter?, metadata? })",
        kind: "json"
      }
    ]
  },
  {
    legend: "Code hosting",
    fields: [
      {
        path: "capabilities.codehost.connectionId",
        label: "Code-hosting connection",
        kind: "select",
        options: refs.codehost
      },
      { path: "capabilities.codehost.repositories", label: "Repositories (one a line)", kind: "list" },
      { path: "capabilities.codehost.git.branchPrefix", label: "Branch prefix", kind: "text" },
      { path: "capabilities.codehost.git.baseBranches", label: "Base branches (one a line)", kind: "list" },
      { path: "capabilities.codehost.approval", label: "Write approval", kind: "select", options: approval },
      { path: "capabilities.codehost.gatedTools", label: "Gated tools (one a line)", kind: "list" },
      { path: "capabilities.codehost.allowedTools", label: "Allowed tools (one a line)", kind: "list" },
      { path: "capabilities.codehost.blockedTools", label: "Blocked tools (one a line)", kind: "list" }
    ]
  },
  {
    legend: "Workspace",
    fields: [
      {
        path: "workspace.type",
        label: "Workspace",
        kind: "select",
        options: [["managed", "managed (a sandbox per thread)"], ["remote", "remote (an environment)"]]
      }
    ]
  },
  {
    legend: "Managed workspace",
    when: { path: "workspace.type", values: ["managed"] },
    fields: [
      ...["filesystem", "shell", "documents", "mediaEditing"].map((flag) => (
        /** @type {const} */ ({ path: `workspace.${flag}`, label: `Workspace ${flag}`, kind: "tri" })
      )),
      {
        path: "workspace.resources",
        label: "Resources",
        kind: "select",
        options: [["small", "small"], ["standard", "standard"], ["large", "large"]]
      },
      { path: "workspace.lifecycle.idleMinutes", label: "Idle minutes", kind: "number" },
      { path: "workspace.lifecycle.retentionDays", label: "Retention days", kind: "number" },
      {
        path: "workspace.network.mode",
        label: "Network",
        kind: "select",
        options: [["public", "public"], ["restricted", "restricted"], ["offline", "offline"]]
      },
      { path: "workspace.network.allowDomains", label: "Allowed domains (restricted; one a line)", kind: "list" },
      { path: "workspace.previews.enabled", label: "Previews", kind: "tri" },
      { path: "workspace.previews.ports", label: "Preview ports (one a line)", kind: "numbers" },
      { path: "workspace.seed.url", label: "Seed git URL", kind: "text" },
      { path: "workspace.seed.revision", label: "Seed revision", kind: "text" },
      { path: "workspace.seed.depth", label: "Seed depth", kind: "number" },
      {
        path: "workspace.services",
        label: "Services (JSON array of { name, command, cwd?, port?, restartPolicy? })",
        kind: "json"
      },
      { path: "workspace.secretContexts", label: "Secret contexts", kind: "ids", options: refs.secretContexts }
    ]
  },
  {
    legend: "Remote workspace",
    when: { path: "workspace.type", values: ["remote"] },
    fields: [
      { path: "workspace.environmentId", label: "Environment id", kind: "text" },
      { path: "workspace.filesystem", label: "Remote filesystem", kind: "tri" },
      { path: "workspace.shell", label: "Remote shell", kind: "tri" }
    ]
  },
  {
    legend: "Artifacts",
    fields: [
      {
        path: "artifacts.stream.urls",
        label: "Stream URLs",
        kind: "select",
        options: [["durable-only", "durable-only"], ["include-svc-signed", "include-svc-signed"]]
      },
      {
        path: "artifacts.exports.resultHandlerId",
        label: "Exports go to result handler",
        kind: "select",
        options: refs.resultHandlers
      },
      ...["generatedDeliverables", "workspaceExports", "browserScreenshots", "browserDownloads"].map((what) => (
        /** @type {const} */ ({ path: `artifacts.exports.include.${what}`, label: `Export ${what}`, kind: "tri" })
      )),
      {
        path: "artifacts.oversizedToolResults.resultHandlerId",
        label: "Oversized tool results go to",
        kind: "select",
        options: refs.resultHandlers
      }
    ]
  },
  {
    legend: "Approvals",
    fields: [
      { path: "approvals.toolExecution.hookId", label: "Tool approval hook", kind: "select", options: refs.hooks },
      { path: "approvals.autoAllow", label: "Auto-allowed tools (one a line)", kind: "list" }
    ]
  },
  {
    legend: "Policies",
    fields: [
      { path: "policies.maxStepsDefault", label: "Max steps (default)", kind: "number" },
      { path: "policies.maxDurationMsDefault", label: "Max duration in ms (default)", kind: "number" },
      {
        path: "policies.mediaFidelity",
        label: "Media fidelity",
        kind: "select",
        options: [["standard", "standard"], ["spatial", "spatial"]]
      },
      {
        path: "policies.dataHandling",
        label: "Data handling",
        kind: "select",
        options: [["standard", "standard"], ["strict", "strict"]]
      }
    ]
  },
  {
    legend: "Metadata",
    fields: [{ path: "metadata", label: "Other metadata (key=value, one a line)", kind: "pairs", exclude: ["name"] }]
  }
]

/**
 * The create body from the form's values (a seed is a git seed).
 * @param {Record<string, unknown>} body
 */
export const createBody = (body) => {
  const workspace = body["workspace"]
  if (isRecord(workspace) && isRecord(workspace["seed"])) workspace["seed"] = { type: "git", ...workspace["seed"] }
  return body
}

/**
 * The PATCH that makes `agent` what the form says (spec 4.1 update rules).
 * @param {Record<string, unknown>} body the create body
 * @param {import("../api.js").Agent} agent as stored
 */
export const patchBody = (body, agent) => {
  const policies = isRecord(body["policies"]) ? body["policies"] : {}
  const metadata = isRecord(body["metadata"]) ? body["metadata"] : {}
  return {
    ...body,
    context: body["context"] ?? [],
    capabilities: body["capabilities"] ?? {},
    artifacts: body["artifacts"] ?? null,
    workspace: body["workspace"] ?? null,
    approvals: body["approvals"] ?? null,
    policies: Object.fromEntries(
      ["maxStepsDefault", "maxDurationMsDefault", "mediaFidelity", "dataHandling"].map((k) => [k, policies[k] ?? null])
    ),
    metadata: {
      ...Object.fromEntries(Object.keys(agent.metadata).map((k) => [k, null])),
      ...metadata
    }
  }
}
