/**
 * What every tool family (MCP servers, HTTP connections, and the families made
 * of definitions, ToolDef.ts: workspace, exports, code host) offers the run
 * loop. The loop only sees this shape, through the run's Toolset; a family
 * never imports the loop.
 * A family may also offer a capability the Toolset applies to every family's
 * results (`spill`: oversized results kept whole where the model can read them).
 */
import { Data, type Effect, type Redacted } from "effect"
import type { ToolSpec } from "../../domain/Conversation.ts"
import type { ToolOutcome } from "./ToolOutcome.ts"

/**
 * The run's oversized-result handler (artifacts.oversizedToolResults), used when no family
 * can `spill`: archives an over-cap result's whole text and answers the handler's artifactId.
 */
export interface Archive {
  readonly resultHandlerId: string
  readonly send: (
    call: { readonly id: string; readonly name: string },
    step: number,
    full: string
  ) => Effect.Effect<
    { readonly artifactId: string; readonly url?: string },
    /** Why the handler could not archive it (as ResultDispatch reports it). */
    { readonly reason: string; readonly code: string; readonly message: string }
  >
}

/** The whole result could not be kept (the workspace's disk limit, a sandbox that failed). */
export class SpillFailed extends Data.TaggedError("SpillFailed")<{ readonly message: string }> {}

/** Which call a family runs: what a family needs to name what it produces after the call (a stable delivery id). */
export interface CallRef {
  readonly id: string
  readonly step: number
}

/** The approval policy of the adapter a tool belongs to, with the tool's original name. */
export interface ToolPolicyRef {
  readonly approval: "once" | "always" | "never" | null
  readonly gatedTools: ReadonlyArray<string> | null
  readonly originalName: string
}

export interface ToolFamily {
  readonly specs: ReadonlyArray<ToolSpec>
  /** Undefined when `name` is not a tool of this family. `call`: the call's `tc_` id and its step (0-based). */
  readonly call: (name: string, input: unknown, call: CallRef) => Effect.Effect<ToolOutcome> | undefined
  readonly policyOf: (name: string) => ToolPolicyRef | undefined
  /** Whether some tool's results reach the model in the untrusted envelope. */
  readonly untrusted: boolean
  /** The skills one of which must be loaded before the tool runs (empty: none). */
  readonly requiredSkillsOf: (name: string) => ReadonlyArray<string>
  /** Tools whose input schemas load on demand. */
  readonly deferred: ReadonlySet<string>
  /**
   * Offered by a family whose tools can read files back (the workspace): keeps an oversized
   * result whole as the file `name` and answers its path, relative to where those tools read.
   */
  readonly spill?: (name: string, content: string) => Effect.Effect<string, SpillFailed>
  /** Offered by the workspace: whole files of any content in and out (attachments placed, exports read back). */
  readonly files?: FileAccess
  /** Offered by the workspace: git operations of the code-hosting tools, online to one origin (GitAccess). */
  readonly git?: GitAccess
  /** Offered by the code host: instruction files of the granted repository, for the system prompt. */
  readonly instructions?: ReadonlyArray<string>
}

/** A git operation's command and the origin it may reach (its credential added by the proxy, never the sandbox). */
export interface GitOperation {
  readonly command: string
  readonly env: Readonly<Record<string, string>>
  /** The only host the command can reach, e.g. `https://github.com`, and the header the proxy adds for it (none: no credential). */
  readonly origin: { readonly url: string; readonly authorization: Redacted.Redacted | undefined }
  readonly timeoutMs?: number
}

export interface GitResult {
  readonly exitCode: number
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs a code-hosting git command in the workspace (bash, at the workspace root) with a network
 * of its own: an egress proxy of this command only, reaching only the origin and adding its
 * credential there; the proxy is closed (the credential gone) when the command ends.
 */
export interface GitAccess {
  readonly exec: (operation: GitOperation) => Effect.Effect<GitResult, SpillFailed>
}

/** Whole files of a family that keeps files; paths relative to where its tools read. */
export interface FileAccess {
  readonly write: (path: string, bytes: Uint8Array) => Effect.Effect<string, SpillFailed>
  readonly read: (
    path: string,
    maxBytes: number
  ) => Effect.Effect<{ readonly path: string; readonly bytes: Uint8Array }, SpillFailed>
}
