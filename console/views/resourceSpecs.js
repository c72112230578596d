/**
 * The registrations the console manages besides agents (spec 4.5 to 4.10):
 * their routes, their fields (from the spec's register and update bodies),
 * what the list shows, and their actions (test, rotate a secret). A secret's
 * value and a hook's or handler's signing secret are write-only: asked for
 * when creating or rotating, never shown.
 */

/** @typedef {import("./form.js").Field} Field */
/** @typedef {import("./form.js").Group} Group */
/**
 * @typedef {object} Action
 * @property {string} label
 * @property {string} path appended to the item's route ("/test")
 * @property {{ field: string, label: string }} [secret] asks for a new write-only value sent as { [field]: value }
 * @typedef {object} ResourceSpec
 * @property {string} slug its view's route ("#/tool-servers")
 * @property {string} route "/v1/tool-servers"
 * @property {string} title "Tool servers"
 * @property {string} noun "tool server"
 * @property {(refs: { secrets: ReadonlyArray<readonly [string, string]> }) => ReadonlyArray<Group>} groups
 * @property {ReadonlyArray<string>} columns fields shown in the list
 * @property {ReadonlyArray<Action>} actions
 * @property {(body: Record<string, unknown>) => Record<string, unknown>} [normalize]
 */

const approval = /** @type {const} */ ([["once", "once"], ["always", "always"], ["never", "never"]])

/** @param {string} path @returns {Field} */
const metadata = (path = "metadata") => ({ path, label: "Metadata (key=value, one a line)", kind: "pairs" })

/** @param {ReadonlyArray<readonly [string, string]>} secrets @returns {ReadonlyArray<Field>} */
const auth = (secrets) => [
  {
    path: "auth.type",
    label: "Auth",
    kind: "select",
    required: true,
    options: [["none", "none"], ["bearer", "bearer (a secret)"]]
  },
  { path: "auth.secretId", label: "Bearer secret", kind: "select", options: secrets }
]

/** Tool policy fields shared by tool servers and HTTP connections (spec 4.6). @type {ReadonlyArray<Field>} */
const toolPolicy = [
  { path: "approval", label: "Approval", kind: "select", options: approval, nullOnUpdate: true },
  { path: "gatedTools", label: "Gated tools (one a line)", kind: "list", nullOnUpdate: true },
  { path: "resultCapBytes", label: "Result cap (bytes)", kind: "number" },
  { path: "trusted", label: "Trusted output", kind: "tri" },
  { path: "defer", label: "Defer tool schemas", kind: "tri" },
  { path: "requiredSkills", label: "Required skills (one a line)", kind: "list", nullOnUpdate: true },
  { path: "enabled", label: "Enabled", kind: "tri" },
  { path: "requestTimeoutMs", label: "Request timeout (ms)", kind: "number", nullOnUpdate: true }
]

/** `auth: { type: 'none' }` carries no secret. @param {Record<string, unknown>} body */
const authBody = (body) => {
  const given = body["auth"]
  if (typeof given === "object" && given !== null && "type" in given && given.type === "none") {
    body["auth"] = { type: "none" }
  }
  return body
}

/** @type {ReadonlyArray<ResourceSpec>} */
export const resourceSpecs = [
  {
    slug: "tool-servers",
    route: "/v1/tool-servers",
    title: "Tool servers",
    noun: "tool server",
    columns: ["transport", "url", "enabled"],
    actions: [{ label: "Test", path: "/test" }],
    normalize: authBody,
    groups: ({ secrets }) => [{
      legend: "Tool server (MCP)",
      fields: [
        {
          path: "name",
          label: "Name",
          kind: "text",
          required: true,
          help: "Letters, digits, _ and -; tools are mcp__<name>__<tool>."
        },
        {
          path: "transport",
          label: "Transport",
          kind: "select",
          required: true,
          options: [["http", "http (Streamable HTTP)"], ["sse", "sse (legacy)"]]
        },
        { path: "url", label: "URL", kind: "text", required: true },
        ...auth(secrets),
        { path: "allowedTools", label: "Allowed tools (one a line)", kind: "list", nullOnUpdate: true },
        { path: "blockedTools", label: "Blocked tools (one a line)", kind: "list", nullOnUpdate: true },
        ...toolPolicy,
        {
          path: "protocolVersion",
          label: "Protocol version",
          kind: "select",
          createOnly: true,
          options: [["2025-11-25", "2025-11-25"]]
        },
        metadata()
      ]
    }]
  },
  {
    slug: "http-connections",
    route: "/v1/http-connections",
    title: "HTTP connections",
    noun: "HTTP connection",
    columns: ["baseUrl", "enabled"],
    actions: [{ label: "Test", path: "/test" }],
    normalize: authBody,
    groups: ({ secrets }) => [{
      legend: "HTTP connection (OpenAPI)",
      fields: [
        { path: "name", label: "Name", kind: "text", required: true, help: "Tools are api__<name>__<operation>." },
        { path: "spec", label: "OpenAPI document (a URL or inline JSON)", kind: "textarea", required: true },
        { path: "baseUrl", label: "Base URL", kind: "text" },
        ...auth(secrets),
        { path: "allowedOperations", label: "Allowed operations (one a line)", kind: "list" },
        ...toolPolicy,
        metadata()
      ]
    }]
  },
  {
    slug: "secrets",
    route: "/v1/secrets",
    title: "Secrets",
    noun: "secret",
    columns: ["contentType", "configVersion"],
    actions: [{ label: "Rotate", path: "/rotate", secret: { field: "value", label: "New value" } }],
    groups: () => [{
      legend: "Secret",
      fields: [
        { path: "name", label: "Name", kind: "text", required: true },
        {
          path: "value",
          label: "Value (write-only: never shown again)",
          kind: "secret",
          required: true,
          createOnly: true
        },
        { path: "contentType", label: "Content type", kind: "text", nullOnUpdate: true },
        metadata()
      ]
    }]
  },
  {
    slug: "hooks",
    route: "/v1/tool-approval-hooks",
    title: "Approval hooks",
    noun: "approval hook",
    columns: ["url", "enabled", "onHookError"],
    actions: [
      { label: "Test", path: "/test" },
      { label: "Rotate secret", path: "/rotate-secret", secret: { field: "secret", label: "New signing secret" } }
    ],
    groups: () => [{
      legend: "Tool approval hook",
      fields: [
        { path: "name", label: "Name", kind: "text", required: true },
        { path: "url", label: "URL", kind: "text", required: true },
        { path: "secret", label: "Signing secret (write-only)", kind: "secret", required: true, createOnly: true },
        { path: "enabled", label: "Enabled", kind: "tri" },
        {
          path: "onHookError",
          label: "When the hook fails",
          kind: "select",
          options: [["deny", "deny"], ["pause", "pause"], ["fail-run", "fail-run"]]
        },
        { path: "requestTimeoutMs", label: "Request timeout (ms)", kind: "number", nullOnUpdate: true },
        metadata()
      ]
    }]
  },
  {
    slug: "result-handlers",
    route: "/v1/result-handlers",
    title: "Result handlers",
    noun: "result handler",
    columns: ["kind", "url"],
    actions: [{
      label: "Rotate secret",
      path: "/rotate-secret",
      secret: { field: "secret", label: "New signing secret" }
    }],
    groups: () => [{
      legend: "Result handler",
      fields: [
        {
          path: "kind",
          label: "Kind",
          kind: "select",
          required: true,
          createOnly: true,
          options: [["artifact", "artifact"]]
        },
        { path: "name", label: "Name", kind: "text", required: true },
        { path: "url", label: "URL", kind: "text", required: true },
        { path: "secret", label: "Signing secret (write-only)", kind: "secret", required: true, createOnly: true },
        { path: "requestTimeoutMs", label: "Request timeout (ms)", kind: "number", nullOnUpdate: true },
        metadata()
      ]
    }]
  }
]
