/**
 * Agents (spec 2.1): saved configurations. Input schemas are strict (unknown
 * keys are rejected by the API's parse options); the resource carries every
 * field resolved to its effective value.
 */
import { Schema } from "effect"
import { Band } from "./Band.ts"
import { ContextBlock, ContextInput } from "./Context.ts"
import { AgentId } from "./Ids.ts"
import { Metadata, MetadataPatch } from "./Metadata.ts"

const NonEmpty = Schema.String.check(Schema.isNonEmpty({ message: "must not be empty" }))
const Id = NonEmpty.check(Schema.isMaxLength(128))
const StringList = Schema.Array(NonEmpty)
const PositiveInt = (max: number, what: string) =>
  Schema.Number.check(
    Schema.isInt({ message: `${what} must be an integer` }),
    Schema.isBetween({ minimum: 1, maximum: max }, { message: `${what} must be between 1 and ${max}` })
  )
const opt = Schema.optionalKey

export const ApprovalMode = Schema.Literals(["once", "always", "never"]).annotate({ identifier: "ApprovalMode" })
export type ApprovalMode = typeof ApprovalMode.Type

// ---- 2.1.1 capabilities ---------------------------------------------------

export const BrowserCapability = Schema.Union([
  Schema.Boolean,
  Schema.Struct({
    authenticated: opt(Schema.Struct({ profileKey: NonEmpty })),
    files: opt(Schema.Boolean),
    tabs: opt(Schema.Boolean)
  })
])

export const MediaCapability = Schema.Union([
  Schema.Boolean,
  Schema.Struct({
    image: opt(Schema.Boolean),
    video: opt(Schema.Boolean),
    speech: opt(Schema.Boolean),
    music: opt(Schema.Boolean),
    soundEffect: opt(Schema.Boolean)
  })
])

export const CodehostCapability = Schema.Struct({
  connectionId: Id.pipe(Schema.brand("CodehostConnectionId")),
  repositories: opt(StringList),
  git: opt(Schema.Struct({ branchPrefix: opt(NonEmpty), baseBranches: opt(StringList) })),
  approval: opt(ApprovalMode),
  gatedTools: opt(StringList),
  allowedTools: opt(StringList),
  blockedTools: opt(StringList)
})

export const AgentSkill = Schema.Struct({
  name: NonEmpty.check(Schema.isMaxLength(64)),
  description: Schema.String,
  body: Schema.String,
  frontmatter: opt(Schema.Record(Schema.String, Schema.Unknown)),
  metadata: opt(Schema.Record(Schema.String, Schema.Unknown))
}).annotate({ identifier: "AgentSkill" })
export type AgentSkill = typeof AgentSkill.Type

export const AgentCapabilities = Schema.Struct({
  web: opt(Schema.Boolean),
  browser: opt(BrowserCapability),
  userInteraction: opt(Schema.Boolean),
  subagents: opt(Schema.Boolean),
  media: opt(MediaCapability),
  mediaView: opt(Schema.Struct({ output: opt(Schema.Literals(["analysis", "auto"])) })),
  codehost: opt(CodehostCapability),
  http: opt(Schema.Struct({ connectionIds: Schema.Array(Id.pipe(Schema.brand("HttpConnectionId"))) })),
  mcp: opt(Schema.Struct({ toolServerIds: Schema.Array(Id.pipe(Schema.brand("ToolServerId"))) })),
  skills: opt(Schema.Array(AgentSkill))
}).annotate({ identifier: "AgentCapabilities" })
export type AgentCapabilities = typeof AgentCapabilities.Type

// ---- 2.1.2 artifacts -------------------------------------------------------

export const StreamUrls = Schema.Literals(["durable-only", "include-svc-signed"])

export const AgentArtifacts = Schema.Struct({
  stream: opt(Schema.Struct({ urls: opt(StreamUrls) })),
  exports: opt(
    Schema.Struct({
      resultHandlerId: opt(Id.pipe(Schema.brand("ResultHandlerId"))),
      include: opt(
        Schema.Struct({
          generatedDeliverables: opt(Schema.Boolean),
          workspaceExports: opt(Schema.Boolean),
          browserScreenshots: opt(Schema.Boolean),
          browserDownloads: opt(Schema.Boolean)
        })
      )
    })
  ),
  oversizedToolResults: opt(Schema.Struct({ resultHandlerId: opt(Id.pipe(Schema.brand("ResultHandlerId"))) }))
}).annotate({ identifier: "AgentArtifacts" })
export type AgentArtifacts = typeof AgentArtifacts.Type

/** The default projection: durable URLs only, no handlers. */
export const DefaultArtifacts: AgentArtifacts = { stream: { urls: "durable-only" } }

// ---- 2.1.3 workspace -------------------------------------------------------

export const WorkspaceNetwork = Schema.Union([
  Schema.Struct({ mode: opt(Schema.Literal("public")) }),
  Schema.Struct({ mode: Schema.Literal("restricted"), allowDomains: StringList }),
  Schema.Struct({ mode: Schema.Literal("offline") })
])

const Port = Schema.Number.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 65_535 }))

export const ManagedWorkspace = Schema.Struct({
  type: Schema.Literal("managed"),
  filesystem: opt(Schema.Boolean),
  shell: opt(Schema.Boolean),
  documents: opt(Schema.Boolean),
  mediaEditing: opt(Schema.Boolean),
  resources: opt(Schema.Literals(["small", "standard", "large"])),
  lifecycle: opt(
    Schema.Struct({
      idleMinutes: opt(PositiveInt(10_080, "lifecycle.idleMinutes")),
      retentionDays: opt(PositiveInt(3_650, "lifecycle.retentionDays"))
    })
  ),
  network: opt(WorkspaceNetwork),
  previews: opt(Schema.Struct({ enabled: opt(Schema.Boolean), ports: opt(Schema.Array(Port)) })),
  seed: opt(
    Schema.Struct({
      type: Schema.Literal("git"),
      url: NonEmpty,
      revision: opt(NonEmpty),
      depth: opt(PositiveInt(1_000_000, "seed.depth"))
    })
  ),
  services: opt(
    Schema.Array(
      Schema.Struct({
        name: NonEmpty,
        command: NonEmpty,
        cwd: opt(NonEmpty),
        port: opt(Port),
        restartPolicy: opt(Schema.Literals(["on-resume", "manual"]))
      })
    )
  ),
  secretContexts: opt(Schema.Array(Id.pipe(Schema.brand("SecretContextId"))))
}).annotate({ identifier: "ManagedWorkspace" })
export type ManagedWorkspace = typeof ManagedWorkspace.Type

export const RemoteWorkspace = Schema.Struct({
  type: Schema.Literal("remote"),
  environmentId: Id,
  filesystem: opt(Schema.Boolean),
  shell: opt(Schema.Boolean),
  // Declared only so the error can say why it is refused (rule 2).
  secretContexts: opt(Schema.Array(Schema.String))
}).annotate({ identifier: "RemoteWorkspace" })
export type RemoteWorkspace = typeof RemoteWorkspace.Type

export const AgentWorkspace = Schema.Union([ManagedWorkspace, RemoteWorkspace]).annotate({
  identifier: "AgentWorkspace"
})
export type AgentWorkspace = typeof AgentWorkspace.Type

// ---- 2.1.4 policies / 2.1.5 approvals -------------------------------------

export const PolicyLimits = { maxSteps: 500, maxDurationMs: 30 * 24 * 60 * 60 * 1000 } as const
const MaxSteps = PositiveInt(PolicyLimits.maxSteps, "maxStepsDefault")
const MaxDuration = PositiveInt(PolicyLimits.maxDurationMs, "maxDurationMsDefault")
export const MediaFidelity = Schema.Literals(["standard", "spatial"])
export const DataHandling = Schema.Literals(["standard", "strict"])
export type DataHandling = typeof DataHandling.Type

export const AgentCreatePolicies = Schema.Struct({
  maxStepsDefault: opt(Schema.NullOr(MaxSteps)),
  maxDurationMsDefault: opt(Schema.NullOr(MaxDuration)),
  mediaFidelity: opt(MediaFidelity),
  dataHandling: opt(DataHandling)
}).annotate({ identifier: "AgentCreatePolicies" })

export const AgentPatchPolicies = Schema.Struct({
  maxStepsDefault: opt(Schema.NullOr(MaxSteps)),
  maxDurationMsDefault: opt(Schema.NullOr(MaxDuration)),
  mediaFidelity: opt(Schema.NullOr(MediaFidelity)),
  dataHandling: opt(Schema.NullOr(DataHandling))
}).annotate({ identifier: "AgentPatchPolicies" })
export type AgentPatchPolicies = typeof AgentPatchPolicies.Type

export const AgentPolicies = Schema.Struct({
  maxStepsDefault: Schema.NullOr(Schema.Number),
  maxDurationMsDefault: Schema.NullOr(Schema.Number),
  mediaFidelity: MediaFidelity,
  dataHandling: DataHandling
}).annotate({ identifier: "AgentPolicies" })
export type AgentPolicies = typeof AgentPolicies.Type

export const DefaultPolicies: AgentPolicies = {
  maxStepsDefault: null,
  maxDurationMsDefault: null,
  mediaFidelity: "standard",
  dataHandling: "standard"
}

export const AgentApprovals = Schema.Struct({
  toolExecution: opt(Schema.Struct({ hookId: Id.pipe(Schema.brand("HookId")) })),
  autoAllow: opt(StringList)
}).annotate({ identifier: "AgentApprovals" })
export type AgentApprovals = typeof AgentApprovals.Type

// ---- inputs and resource ---------------------------------------------------

export const AgentCreate = Schema.Struct({
  context: opt(ContextInput),
  band: opt(Band),
  capabilities: opt(AgentCapabilities),
  artifacts: opt(AgentArtifacts),
  workspace: opt(AgentWorkspace),
  approvals: opt(AgentApprovals),
  policies: opt(AgentCreatePolicies),
  metadata: opt(Metadata)
}).annotate({ identifier: "AgentCreate" })
export type AgentCreate = typeof AgentCreate.Type

export const AgentPatch = Schema.Struct({
  context: opt(ContextInput),
  band: opt(Band),
  capabilities: opt(AgentCapabilities),
  artifacts: opt(Schema.NullOr(AgentArtifacts)),
  workspace: opt(Schema.NullOr(AgentWorkspace)),
  approvals: opt(Schema.NullOr(AgentApprovals)),
  policies: opt(Schema.NullOr(AgentPatchPolicies)),
  metadata: opt(MetadataPatch)
}).annotate({ identifier: "AgentPatch" })
export type AgentPatch = typeof AgentPatch.Type

/** The stored configuration: every field resolved. */
export const AgentConfig = Schema.Struct({
  context: Schema.Array(ContextBlock),
  band: Band,
  capabilities: AgentCapabilities,
  artifacts: AgentArtifacts,
  workspace: Schema.NullOr(AgentWorkspace),
  approvals: Schema.NullOr(AgentApprovals),
  policies: AgentPolicies
})
export type AgentConfig = typeof AgentConfig.Type

export const Agent = Schema.Struct({
  id: AgentId,
  object: Schema.Literal("agent"),
  ...AgentConfig.fields,
  metadata: Metadata,
  configVersion: Schema.Number,
  createdAt: Schema.String,
  updatedAt: Schema.String
}).annotate({ identifier: "Agent" })
export type Agent = typeof Agent.Type

/** The configuration part of an agent (what configVersion tracks). */
export const agentConfigOf = (a: Agent): AgentConfig => ({
  context: a.context,
  band: a.band,
  capabilities: a.capabilities,
  artifacts: a.artifacts,
  workspace: a.workspace,
  approvals: a.approvals,
  policies: a.policies
})
