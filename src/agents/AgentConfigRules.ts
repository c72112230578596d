/**
 * The rules of spec 2.1 and 4.1 as pure functions: building a configuration
 * from a create body, applying a PATCH (update rules 1-7), and checking the
 * cross-field rules that a schema cannot express.
 */
import {
  type AgentArtifacts,
  type AgentConfig,
  type AgentCreate,
  type AgentPatch,
  type AgentPolicies,
  type AgentWorkspace,
  DefaultArtifacts,
  DefaultPolicies,
  type ManagedWorkspace
} from "../../domain/Agent.ts"
import type { Band } from "../../domain/Band.ts"
import { DefaultBand } from "../../domain/Band.ts"
import { normalizeContext } from "../../domain/Context.ts"
import { InvalidRequest } from "../../domain/Errors.ts"
import { browserRefusal } from "../browser/BrowserRuntime.ts"
import { type HostRuntimes, runtimeRefusal } from "../documents/HostRuntimes.ts"
import { type MediaOffer, mediaRefusal } from "../media/MediaOffer.ts"
import { strictRefusal, type WebOffer } from "../web/WebTools.ts"
import { allowDomainRefusal } from "../workspace/NetworkPolicy.ts"
import { previewPorts } from "../workspace/Previews.ts"
import { checkCodehostGrant } from "./CodehostGrantRules.ts"

const toolName = /^[A-Za-z0-9_-]{1,64}$/

/**
 * Workspace booleans resolve to explicit values: filesystem defaults to true,
 * shell to the value of filesystem, documents and mediaEditing to false, and
 * previews.enabled to true when ports are listed. On update, a managed
 * workspace's documents and mediaEditing carry forward from the previous
 * managed workspace when omitted (rule 2).
 */
export const resolveWorkspace = (w: AgentWorkspace, previous: AgentWorkspace | null): AgentWorkspace => {
  const filesystem = w.filesystem ?? true
  const shell = w.shell ?? filesystem
  if (w.type === "remote") return { ...w, filesystem, shell }
  const prior = previous?.type === "managed" ? previous : undefined
  return {
    ...w,
    filesystem,
    shell,
    documents: w.documents ?? prior?.documents ?? false,
    mediaEditing: w.mediaEditing ?? prior?.mediaEditing ?? false,
    ...(w.previews === undefined
      ? {}
      : { previews: { ...w.previews, enabled: w.previews.enabled ?? (w.previews.ports ?? []).length > 0 } })
  }
}

const resolvePolicies = (base: AgentPolicies, patch: AgentPatch["policies"]): AgentPolicies => {
  if (patch === undefined) return base
  if (patch === null) return DefaultPolicies
  return {
    maxStepsDefault: patch.maxStepsDefault === undefined ? base.maxStepsDefault : patch.maxStepsDefault,
    maxDurationMsDefault: patch.maxDurationMsDefault === undefined
      ? base.maxDurationMsDefault
      : patch.maxDurationMsDefault,
    mediaFidelity: patch.mediaFidelity === undefined
      ? base.mediaFidelity
      : patch.mediaFidelity ?? DefaultPolicies.mediaFidelity,
    dataHandling: patch.dataHandling === undefined
      ? base.dataHandling
      : patch.dataHandling ?? DefaultPolicies.dataHandling
  }
}

/** Artifacts resolve to their effective value: the stream projection defaults to 'durable-only'. */
const resolveArtifacts = (a: AgentArtifacts | null | undefined): AgentArtifacts =>
  a === undefined || a === null ? DefaultArtifacts : { ...a, stream: { urls: a.stream?.urls ?? "durable-only" } }

export const buildConfig = (input: AgentCreate): AgentConfig | InvalidRequest => {
  const context = input.context === undefined ? [] : normalizeContext(input.context)
  if (context instanceof InvalidRequest) return context
  return {
    context,
    band: input.band ?? DefaultBand,
    capabilities: input.capabilities ?? {},
    artifacts: resolveArtifacts(input.artifacts),
    workspace: input.workspace === undefined ? null : resolveWorkspace(input.workspace, null),
    approvals: input.approvals ?? null,
    policies: resolvePolicies(DefaultPolicies, input.policies ?? {})
  }
}

/** Update rules 1-4: partial; replace semantics for capabilities and workspace. */
export const applyPatch = (current: AgentConfig, patch: AgentPatch): AgentConfig | InvalidRequest => {
  const context = patch.context === undefined ? current.context : normalizeContext(patch.context)
  if (context instanceof InvalidRequest) return context
  return {
    context,
    band: patch.band ?? current.band,
    capabilities: patch.capabilities ?? current.capabilities,
    artifacts: patch.artifacts === undefined ? current.artifacts : resolveArtifacts(patch.artifacts),
    workspace: patch.workspace === undefined
      ? current.workspace
      : patch.workspace === null
      ? null
      : resolveWorkspace(patch.workspace, current.workspace),
    approvals: patch.approvals === undefined ? current.approvals : patch.approvals,
    policies: resolvePolicies(current.policies, patch.policies)
  }
}

const browserRequested = (browser: NonNullable<AgentConfig["capabilities"]["browser"]>): boolean =>
  typeof browser === "boolean" ? browser : true

/**
 * Declared services: names and ports unique (a name is the service's identity and log file), no
 * port 3128 (the egress proxy's inside the sandbox). (A workspace that never opens, with neither
 * filesystem nor shell, is refused before.)
 */
const checkServices = (ws: ManagedWorkspace): InvalidRequest | undefined => {
  const services = ws.services ?? []
  for (const [i, service] of services.entries()) {
    if (services.findIndex((s) => s.name === service.name) !== i) {
      return InvalidRequest.forField(
        `workspace.services[${i}].name`,
        `Another service is already named '${service.name}'.`
      )
    }
    if (service.port === 3128) {
      return InvalidRequest.forField(
        `workspace.services[${i}].port`,
        "Port 3128 is the egress proxy's inside the workspace; choose another."
      )
    }
    if (service.port !== undefined && services.findIndex((s) => s.port === service.port) !== i) {
      return InvalidRequest.forField(
        `workspace.services[${i}].port`,
        `Another service already listens on port ${service.port}.`
      )
    }
  }
  return undefined
}

/** Previews that would serve nothing are refused: ports listed while disabled, or enabled with no port to show. */
const checkPreviews = (ws: ManagedWorkspace): InvalidRequest | undefined => {
  if (ws.previews?.enabled === false && (ws.previews.ports ?? []).length > 0) {
    return InvalidRequest.forField(
      "workspace.previews.ports",
      "Ports are listed but previews.enabled is false: nothing would be served. Drop the ports, or enable previews."
    )
  }
  if (ws.previews?.enabled === true && previewPorts(ws).length === 0) {
    return InvalidRequest.forField(
      "workspace.previews.ports",
      "previews.enabled is true but no ports are listed and no declared service has a port: nothing would be served."
    )
  }
  return undefined
}

/** allowDomains entries that could never be reached (loopback, private, link-local, metadata): NetworkPolicy.ts. */
const checkAllowDomains = (ws: ManagedWorkspace, allowPrivateUrls: boolean): InvalidRequest | undefined => {
  const allowDomains = ws.network !== undefined && "allowDomains" in ws.network ? ws.network.allowDomains : []
  for (const [i, entry] of allowDomains.entries()) {
    const refused = allowDomainRefusal(entry, allowPrivateUrls)
    if (refused !== undefined) return InvalidRequest.forField(`workspace.network.allowDomains[${i}]`, `${refused}.`)
  }
  return undefined
}

/** What the deployment provides that a configuration may need. */
export interface Deployment {
  readonly isBandAvailable: (band: Band) => boolean
  /** An artifact store is configured (SVC_ARTIFACT_STORE is not `none`): signed artifact URLs can be made. */
  readonly artifactStorage: boolean
  /** A GitHub App is configured (SVC_GITHUB_*): code-hosting connections can back capabilities.codehost. */
  readonly codehost: boolean
  /** SVC_ALLOW_PRIVATE_URLS=1 (development): a workspace may list loopback and private hosts in allowDomains. */
  readonly allowPrivateUrls: boolean
  /** What capabilities.web gives here (src/web/WebTools.ts): web_fetch always, web_search with SVC_WEB_SEARCH. */
  readonly web: WebOffer
  /** The host's document and media-editing runtimes, checked once at start (src/documents/HostRuntimes.ts). */
  readonly runtimes: HostRuntimes
  /** The media kinds this deployment routes (SVC_MEDIA_*, src/media/MediaOffer.ts). */
  readonly media: MediaOffer
}

/**
 * Cross-field rules. Capabilities whose runtime this deployment does not
 * provide (web, browser, media generation and viewing, spatial media
 * fidelity, remote workspaces, documents, media editing, signed artifact
 * URLs without an artifact store) are refused with the spec's
 * `*_unconfigured` codes instead of being accepted and silently doing nothing.
 */
export const checkConfig = (
  config: AgentConfig,
  { allowPrivateUrls, artifactStorage, codehost, isBandAvailable, media: mediaOffer, runtimes, web }: Deployment
): InvalidRequest | undefined => {
  if (!isBandAvailable(config.band)) {
    return InvalidRequest.forField(
      "band",
      `Band '${config.band}' is not available on this deployment (see GET /v1/bands).`
    )
  }
  const ws = config.workspace
  if (ws !== null) {
    if (ws.shell === true && ws.filesystem === false) {
      return InvalidRequest.forField("workspace.shell", "A workspace with shell enabled must also enable filesystem.")
    }
    if (ws.filesystem === false && ws.shell === false) {
      return InvalidRequest.forField(
        "workspace.filesystem",
        "A workspace with neither filesystem nor shell gives the agent nothing: enable filesystem (shell follows it), or set workspace to null."
      )
    }
    const previews = ws.type === "managed" ? checkPreviews(ws) : undefined
    if (previews !== undefined) return previews
    if (ws.type === "remote" && ws.secretContexts !== undefined) {
      return InvalidRequest.forField("workspace.secretContexts", "Remote workspaces do not accept secretContexts.")
    }
  }
  // A remote workspace (issue 31) runs on its environment's runners: its environmentId is checked with the
  // references (AgentReferences.ts); what follows is of managed workspaces only.
  if (ws !== null && ws.type === "managed") {
    // Checked once at start (src/documents/HostRuntimes.ts): the host's LibreOffice, poppler, Node; ffmpeg, ImageMagick, sox.
    const runtime = runtimeRefusal(ws, runtimes)
    if (runtime !== undefined) return InvalidRequest.forField(runtime.field, runtime.message, runtime.code)
    const services = checkServices(ws)
    if (services !== undefined) return services
    const unreachable = checkAllowDomains(ws, allowPrivateUrls)
    if (unreachable !== undefined) return unreachable
  }
  if (config.artifacts.stream?.urls === "include-svc-signed" && !artifactStorage) {
    return InvalidRequest.forField(
      "artifacts.stream.urls",
      "'include-svc-signed' needs artifact storage to sign URLs for; none is configured on this deployment (SVC_ARTIFACT_STORE=none).",
      "artifact_storage_unconfigured"
    )
  }
  const caps = config.capabilities
  if (caps.web === true) {
    if (!web.fetch && web.search === null) {
      return InvalidRequest.forField(
        "capabilities.web",
        "No web runtime is configured on this deployment.",
        "web_runtime_unconfigured"
      )
    }
    const strict = config.policies.dataHandling === "strict" ? strictRefusal(web) : undefined
    if (strict !== undefined) {
      return InvalidRequest.forField("capabilities.web", strict, "strict_data_handling_unavailable")
    }
  }
  if (caps.browser !== undefined && browserRequested(caps.browser)) {
    const refused = browserRefusal(caps.browser, ws)
    if (refused !== undefined) {
      return InvalidRequest.forField("capabilities.browser", refused, "managed_browser_unconfigured")
    }
  }
  const media = mediaRefusal(caps.media, mediaOffer, config.policies.dataHandling === "strict")
  if (media !== undefined) return InvalidRequest.forField(media.field, media.message, media.code)
  if (caps.mediaView !== undefined && !artifactStorage) {
    return InvalidRequest.forField(
      "capabilities.mediaView",
      "mediaView stores what the agent looks at as run artifacts; this deployment has no artifact storage (SVC_ARTIFACT_STORE=none).",
      "artifact_storage_unconfigured"
    )
  }
  if (caps.codehost !== undefined) {
    const grant = checkCodehostGrant(caps.codehost, ws, codehost)
    if (grant !== undefined) return grant
  }
  const skills = caps.skills ?? []
  const names = new Set<string>()
  for (let i = 0; i < skills.length; i++) {
    if (names.has(skills[i].name)) {
      return InvalidRequest.forField(`capabilities.skills[${i}].name`, `Duplicate skill name '${skills[i].name}'.`)
    }
    names.add(skills[i].name)
    const own = ["name", "description"].find((key) => skills[i].frontmatter?.[key] !== undefined)
    if (own !== undefined) {
      return InvalidRequest.forField(
        `capabilities.skills[${i}].frontmatter.${own}`,
        `A skill's ${own} is its own field, not frontmatter; set capabilities.skills[${i}].${own}.`
      )
    }
  }
  const autoAllow = config.approvals?.autoAllow ?? []
  for (let i = 0; i < autoAllow.length; i++) {
    if (!toolName.test(autoAllow[i])) {
      return InvalidRequest.forField(
        `approvals.autoAllow[${i}]`,
        `'${autoAllow[i]}' is not a canonical tool name (1-64 characters of letters, digits, '_' or '-').`
      )
    }
  }
  return undefined
}
