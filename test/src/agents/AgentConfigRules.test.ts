/**
 * The agent configuration rules (spec 2.1, 4.1) without a server: a create
 * body, resolved by `buildConfig` and checked by `checkConfig` against what
 * the deployment provides -> accepted, or the exact 400 (code, field,
 * message) the API answers with. test/api/Agents.test.ts checks end to end
 * that these refusals reach the client through the error envelope.
 */
import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import type { AgentCreate } from "../../../domain/Agent.ts"
import { InvalidRequest } from "../../../domain/Errors.ts"
import { CodehostConnectionId } from "../../../domain/Ids.ts"
import { buildConfig, checkConfig, type Deployment } from "../../../src/agents/AgentConfigRules.ts"
import * as HostRuntimes from "../../../src/documents/HostRuntimes.ts"
import { forbiddenAddress } from "../../../src/outbound/UrlPolicy.ts"

/** This deployment: lite and core have routes, frontier none; no artifact store, no code-hosting app. */
const deployment: Deployment = {
  isBandAvailable: (band) => band !== "frontier",
  artifactStorage: false,
  codehost: false,
  allowPrivateUrls: false,
  web: { fetch: true, search: null, strictSearch: false },
  media: { image: null, video: null, speech: null, music: null, soundEffect: null },
  runtimes: HostRuntimes.none
}

/** A host with the document runtime (LibreOffice, poppler, Node) and the media-editing one (ffmpeg, ImageMagick, sox). */
const withRuntimes: Partial<Deployment> = {
  runtimes: { documents: { available: true, missing: [] }, mediaEditing: { available: true, missing: [] } }
}

/** A deployment with images (strict-capable, priced) and speech (unpriced, not strict). */
const someMedia: Partial<Deployment> = {
  media: {
    image: { route: "openai:gpt-image-1", unit: "image", centsPerUnit: 4, strict: true },
    video: null,
    speech: { route: "openai:gpt-4o-mini-tts", unit: "1k_characters", centsPerUnit: null, strict: false },
    music: null,
    soundEffect: null
  }
}

interface Refusal {
  readonly code: string
  readonly message: string
  readonly details: Readonly<Record<string, unknown>> | undefined
}

interface Row {
  readonly name: string
  readonly body: AgentCreate
  readonly deployment?: Partial<Deployment>
  /** undefined: accepted. */
  readonly refused?: Refusal
}

const refusal = (field: string, message: string, code = "invalid_request_error"): Refusal => ({
  code,
  message,
  details: { field }
})
const unconfigured = (field: string, code: string, message: string) => refusal(field, message, code)
const noMediaRuntime = (field: string, message: string) => unconfigured(field, "media_runtime_unconfigured", message)

const managed = { type: "managed" } as const
const restricted = (allowDomains: ReadonlyArray<string>): AgentCreate => ({
  workspace: { ...managed, network: { mode: "restricted", allowDomains } }
})
const devOnly =
  "workspaces reach loopback and private addresses only on a development deployment (SVC_ALLOW_PRIVATE_URLS=1), named exactly"
/** allowDomains[i] refused: `entry` can never be reached (on this deployment), and why. */
const unreachable = (i: number, entry: string, why: string, where = "") =>
  refusal(`workspace.network.allowDomains[${i}]`, `'${entry}' can never be reached from a workspace${where}: ${why}`)
const remote = { type: "remote", environmentId: "env_1" } as const
const skill = { name: "summarize", description: "d", body: "b" }
const service = (name: string, port?: number) => ({
  name,
  command: "npm start",
  ...(port === undefined ? {} : { port })
})

const rows: ReadonlyArray<Row> = [
  { name: "an empty body is a valid agent", body: {} },
  { name: "band lite is available", body: { band: "lite" } },
  {
    name: "a band without a route on this deployment is refused",
    body: { band: "frontier" },
    refused: refusal("band", "Band 'frontier' is not available on this deployment (see GET /v1/bands).")
  },
  // context (normalized while building)
  {
    name: "context block ids are unique",
    body: { context: [{ id: "a", content: "x" }, { id: "a", content: "y" }] },
    refused: refusal("context[1].id", "Duplicate context block id 'a'.")
  },
  {
    name: "a context string longer than 32,768 characters is refused",
    body: { context: "x".repeat(32_769) },
    refused: refusal("context", "context is 32769 characters; a context block may have at most 32768.")
  },
  // workspace
  { name: "a managed workspace with the defaults is valid", body: { workspace: managed } },
  {
    name: "shell needs filesystem",
    body: { workspace: { ...managed, filesystem: false, shell: true } },
    refused: refusal("workspace.shell", "A workspace with shell enabled must also enable filesystem.")
  },
  {
    name: "a remote workspace with neither filesystem nor shell is refused",
    body: { workspace: { ...remote, filesystem: false } },
    refused: refusal(
      "workspace.filesystem",
      "A workspace with neither filesystem nor shell gives the agent nothing: enable filesystem (shell follows it), or set workspace to null."
    )
  },
  {
    name: "shell needs filesystem on a remote workspace too",
    body: { workspace: { ...remote, filesystem: false, shell: true } },
    refused: refusal("workspace.shell", "A workspace with shell enabled must also enable filesystem.")
  },
  {
    name: "a remote workspace refuses secretContexts, even empty",
    body: { workspace: { ...remote, secretContexts: [] } },
    refused: refusal("workspace.secretContexts", "Remote workspaces do not accept secretContexts.")
  },
  // Its environmentId is checked with the references (test/api/Environments.test.ts).
  { name: "a remote workspace is valid (issue 31)", body: { workspace: remote } },
  {
    name: "workspace.documents on a host without the document runtime",
    body: { workspace: { ...managed, documents: true } },
    refused: unconfigured(
      "workspace.documents",
      "managed_documents_unconfigured",
      "workspace.documents is set but this deployment's host lacks the document runtime: soffice, pdftoppm, pdftotext, node."
    )
  },
  {
    name: "workspace.mediaEditing on a host without the media-editing runtime",
    body: { workspace: { ...managed, mediaEditing: true } },
    refused: unconfigured(
      "workspace.mediaEditing",
      "managed_media_editing_unconfigured",
      "workspace.mediaEditing is set but this deployment's host lacks the media-editing runtime: ffmpeg, ffprobe, convert, sox."
    )
  },
  {
    name: "workspace.documents and mediaEditing on a host with both runtimes",
    body: { workspace: { ...managed, documents: true, mediaEditing: true } },
    deployment: withRuntimes
  },
  {
    name: "the host lacks only LibreOffice: documents refused naming it, mediaEditing accepted",
    body: { workspace: { ...managed, documents: true, mediaEditing: true } },
    deployment: {
      runtimes: {
        documents: { available: false, missing: ["soffice (libreoffice-writer-nogui)"] },
        mediaEditing: { available: true, missing: [] }
      }
    },
    refused: unconfigured(
      "workspace.documents",
      "managed_documents_unconfigured",
      "workspace.documents is set but this deployment's host lacks the document runtime: soffice (libreoffice-writer-nogui)."
    )
  },
  {
    name: "services with distinct names and ports are valid",
    body: { workspace: { ...managed, services: [service("web", 3000), service("worker"), service("api", 8080)] } }
  },
  ...[{ filesystem: false }, { filesystem: false, shell: false, services: [service("web")] }].map((w): Row => ({
    name: `a workspace that would never open is refused: ${JSON.stringify(w)}`,
    body: { workspace: { ...managed, ...w } },
    refused: refusal(
      "workspace.filesystem",
      "A workspace with neither filesystem nor shell gives the agent nothing: enable filesystem (shell follows it), or set workspace to null."
    )
  })),
  {
    name: "previews listing ports while disabled are refused",
    body: { workspace: { ...managed, previews: { enabled: false, ports: [3000] } } },
    refused: refusal(
      "workspace.previews.ports",
      "Ports are listed but previews.enabled is false: nothing would be served. Drop the ports, or enable previews."
    )
  },
  {
    name: "previews disabled without ports are valid",
    body: { workspace: { ...managed, previews: { enabled: false } } }
  },
  {
    name: "previews enabled without ports need a declared service with a port",
    body: { workspace: { ...managed, previews: { enabled: true }, services: [service("worker")] } },
    refused: refusal(
      "workspace.previews.ports",
      "previews.enabled is true but no ports are listed and no declared service has a port: nothing would be served."
    )
  },
  {
    name: "previews enabled without ports show the declared services' ports",
    body: { workspace: { ...managed, previews: { enabled: true }, services: [service("web", 3000)] } }
  },
  {
    name: "service names are unique",
    body: { workspace: { ...managed, services: [service("web"), service("web")] } },
    refused: refusal("workspace.services[1].name", "Another service is already named 'web'.")
  },
  {
    name: "port 3128 is the egress proxy's",
    body: { workspace: { ...managed, services: [service("proxy", 3128)] } },
    refused: refusal(
      "workspace.services[0].port",
      "Port 3128 is the egress proxy's inside the workspace; choose another."
    )
  },
  {
    name: "service ports are unique",
    body: { workspace: { ...managed, services: [service("a", 3000), service("b", 3000)] } },
    refused: refusal("workspace.services[1].port", "Another service already listens on port 3000.")
  },
  // allowDomains: entries that could never be reached
  {
    name: "allowDomains of public names, wildcards and addresses are valid",
    body: restricted(["api.example.com", "*.example.com", "93.184.215.14", "2606:4700::1111"])
  },
  ...[
    "169.254.169.254",
    "169.254.0.1",
    "fe80::1",
    "[fe80::1]",
    "::ffff:169.254.169.254",
    "fd00:ec2::254",
    "100.100.100.200"
  ]
    .flatMap((address) => [false, true].map((dev) => ({ address, dev })))
    .map(({ address, dev }): Row => ({
      name: `allowDomains refuses the link-local or metadata address ${address} (SVC_ALLOW_PRIVATE_URLS ${
        dev ? "on" : "off"
      })`,
      body: restricted(["example.com", address]),
      deployment: { allowPrivateUrls: dev },
      refused: unreachable(1, address, "link-local and cloud metadata addresses are refused.")
    })),
  ...["metadata.google.internal", "Metadata.Google.Internal.", "metadata", "instance-data.ec2.internal"].map((
    name
  ): Row => ({
    name: `allowDomains refuses the metadata name ${name}, whatever the deployment`,
    body: restricted([name]),
    deployment: { allowPrivateUrls: true },
    refused: unreachable(0, name, "it names a cloud metadata service.")
  })),
  ...["*.localhost", "*.app.localhost"].map((entry): Row => ({
    name: `allowDomains refuses the wildcard ${entry}: a wildcard never reaches loopback`,
    body: restricted([entry]),
    deployment: { allowPrivateUrls: true },
    refused: unreachable(0, entry, "names under localhost are loopback, and a wildcard never reaches loopback.")
  })),
  {
    name: "allowDomains refuses a wildcard over an address",
    body: restricted(["*.10.0.0.1"]),
    deployment: { allowPrivateUrls: true },
    refused: unreachable(0, "*.10.0.0.1", "a wildcard applies to host names, not addresses.")
  },
  ...["localhost", "app.localhost", "LocalHost."].flatMap((name): ReadonlyArray<Row> => [
    {
      name: `allowDomains refuses the loopback name ${name} without SVC_ALLOW_PRIVATE_URLS`,
      body: restricted([name]),
      refused: unreachable(0, name, `it is a loopback name; ${devOnly}.`, " on this deployment")
    },
    {
      name: `allowDomains accepts the loopback name ${name} with SVC_ALLOW_PRIVATE_URLS`,
      body: restricted([name]),
      deployment: { allowPrivateUrls: true }
    }
  ]),
  ...["127.0.0.1", "10.0.0.5", "172.16.3.4", "192.168.1.1", "0.0.0.0", "[::1]", "fc00::1"].flatMap((
    address
  ): ReadonlyArray<Row> => [
    {
      name: `allowDomains refuses the loopback or private address ${address} without SVC_ALLOW_PRIVATE_URLS`,
      body: restricted([address]),
      refused: unreachable(
        0,
        address,
        `${forbiddenAddress(address.replace(/^\[|\]$/g, ""))}; ${devOnly}.`,
        " on this deployment"
      )
    },
    {
      name: `allowDomains accepts the loopback or private address ${address} with SVC_ALLOW_PRIVATE_URLS`,
      body: restricted([address]),
      deployment: { allowPrivateUrls: true }
    }
  ]),
  // artifacts
  {
    name: "signed artifact URLs need an artifact store",
    body: { artifacts: { stream: { urls: "include-svc-signed" } } },
    refused: unconfigured(
      "artifacts.stream.urls",
      "artifact_storage_unconfigured",
      "'include-svc-signed' needs artifact storage to sign URLs for; none is configured on this deployment (SVC_ARTIFACT_STORE=none)."
    )
  },
  {
    name: "signed artifact URLs are valid with an artifact store",
    body: { artifacts: { stream: { urls: "include-svc-signed" } } },
    deployment: { artifactStorage: true }
  },
  // capabilities
  {
    name: "capabilities switched off, and subagents on, are valid",
    body: { capabilities: { web: false, browser: false, media: { image: false }, subagents: true } }
  },
  { name: "web without a search provider is valid (web_fetch only)", body: { capabilities: { web: true } } },
  {
    name: "a strict agent with web and no search provider is valid (web_fetch only)",
    body: { capabilities: { web: true }, policies: { dataHandling: "strict" } }
  },
  {
    name: "a strict agent with web and a strict-capable search provider is valid",
    body: { capabilities: { web: true }, policies: { dataHandling: "strict" } },
    deployment: { web: { fetch: true, search: "searxng", strictSearch: true } }
  },
  {
    name: "a standard agent with web may use a provider that is not strict-capable",
    body: { capabilities: { web: true } },
    deployment: { web: { fetch: true, search: "tavily", strictSearch: false } }
  },
  {
    name: "a strict agent with web is refused where the search provider is not strict-capable",
    body: { capabilities: { web: true }, policies: { dataHandling: "strict" } },
    deployment: { web: { fetch: true, search: "tavily", strictSearch: false } },
    refused: unconfigured(
      "capabilities.web",
      "strict_data_handling_unavailable",
      "Strict data handling is required but this deployment's web search provider (tavily) is not marked strict-capable (SVC_WEB_SEARCH_STRICT)."
    )
  },
  ...[true, { tabs: false }].map((browser): Row => ({
    name: `browser ${JSON.stringify(browser)} needs a managed workspace (an options object asks for one)`,
    body: { capabilities: { browser } },
    refused: unconfigured(
      "capabilities.browser",
      "managed_browser_unconfigured",
      "The browser capability needs a managed workspace with a filesystem (workspace: { type: 'managed' }): the browser runs in its sandbox."
    )
  })),
  {
    name: "media: true on a deployment without media routes",
    body: { capabilities: { media: true } },
    refused: noMediaRuntime(
      "capabilities.media",
      "No media generation route is configured on this deployment (SVC_MEDIA_*)."
    )
  },
  {
    name: "a media kind the deployment lacks is named",
    body: { capabilities: { media: { image: true, video: true } } },
    deployment: someMedia,
    refused: noMediaRuntime(
      "capabilities.media.video",
      "Media kind 'video' is not configured on this deployment (see GET /v1/bands media)."
    )
  },
  {
    name: "media: true takes the kinds the deployment has",
    body: { capabilities: { media: true } },
    deployment: someMedia
  },
  {
    name: "media kinds the deployment has, and false ones, are valid",
    body: { capabilities: { media: { image: true, speech: true, video: false } } },
    deployment: someMedia
  },
  {
    name: "a strict agent gets only strict-capable media routes",
    body: { capabilities: { media: { image: true, speech: true } }, policies: { dataHandling: "strict" } },
    deployment: someMedia,
    refused: unconfigured(
      "capabilities.media.speech",
      "strict_data_handling_unavailable",
      "Strict data handling is required but this deployment's speech route (openai:gpt-4o-mini-tts) is not marked strict-capable (SVC_MEDIA_STRICT)."
    )
  },
  {
    name: "a strict agent with a strict-capable media route",
    body: { capabilities: { media: { image: true } }, policies: { dataHandling: "strict" } },
    deployment: someMedia
  },
  {
    name: "mediaView, even empty, needs artifact storage for what the agent looks at",
    body: { capabilities: { mediaView: {} } },
    refused: unconfigured(
      "capabilities.mediaView",
      "artifact_storage_unconfigured",
      "mediaView stores what the agent looks at as run artifacts; this deployment has no artifact storage (SVC_ARTIFACT_STORE=none)."
    )
  },
  {
    name: "mediaView with either output is valid with an artifact store",
    body: { capabilities: { mediaView: { output: "analysis" } } },
    deployment: { artifactStorage: true }
  },
  { name: "mediaFidelity 'spatial' is valid", body: { policies: { mediaFidelity: "spatial" } } },
  {
    name: "a codehost grant is checked by its own rules (here: no workspace)",
    body: { capabilities: { codehost: { connectionId: Schema.decodeSync(CodehostConnectionId)("chc_1") } } },
    refused: refusal(
      "capabilities.codehost",
      "The codehost capability requires a managed workspace with filesystem, shell and a network mode that is not offline."
    )
  },
  {
    name: "skill names are unique",
    body: { capabilities: { skills: [skill, { ...skill, name: "other" }, { ...skill, body: "again" }] } },
    refused: refusal("capabilities.skills[2].name", "Duplicate skill name 'summarize'.")
  },
  {
    name: "skill frontmatter and metadata are valid",
    body: { capabilities: { skills: [{ ...skill, frontmatter: { version: "1.0" }, metadata: { owner: "docs" } }] } }
  },
  ...["name", "description"].map((key): Row => ({
    name: `a skill's ${key} is its own field, not frontmatter`,
    body: { capabilities: { skills: [skill, { ...skill, name: "other", frontmatter: { [key]: "x" } }] } },
    refused: refusal(
      `capabilities.skills[1].frontmatter.${key}`,
      `A skill's ${key} is its own field, not frontmatter; set capabilities.skills[1].${key}.`
    )
  })),
  // approvals
  {
    name: "autoAllow lists canonical tool names of up to 64 characters",
    body: { approvals: { autoAllow: ["read_file", "t".repeat(64), "svc-search_2"] } }
  },
  ...["bad name", "t".repeat(65), "mcp.tool"].map((name): Row => ({
    name: `autoAllow refuses '${name.slice(0, 12)}' (${name.length} characters)`,
    body: { approvals: { autoAllow: ["read_file", name] } },
    refused: refusal(
      "approvals.autoAllow[1]",
      `'${name}' is not a canonical tool name (1-64 characters of letters, digits, '_' or '-').`
    )
  })),
  {
    name: "the first broken rule is the one reported (band before workspace before capabilities)",
    body: { band: "frontier", workspace: remote, capabilities: { web: true } },
    refused: refusal("band", "Band 'frontier' is not available on this deployment (see GET /v1/bands).")
  }
]

/** What create answers: undefined when accepted, else the refusal's code, message and details. */
const verdict = (body: AgentCreate, overrides: Partial<Deployment> = {}): Refusal | undefined => {
  const config = buildConfig(body)
  const broken = config instanceof InvalidRequest ? config : checkConfig(config, { ...deployment, ...overrides })
  return broken === undefined ? undefined : { code: broken.code, message: broken.message, details: broken.details }
}

describe("AgentConfigRules", () => {
  it.each(rows)("$name", (row) => {
    assert.deepStrictEqual(verdict(row.body, row.deployment), row.refused)
  })
})
