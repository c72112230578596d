/**
 * What the code-hosting tools are made of: a tool's definition (name,
 * description, JSON schema, whether its result is untrusted, what it needs),
 * the scope a call runs in (the grant, per-operation tokens, the person's
 * token), input accessors over ajv-validated input, and the tool error.
 * Group files (tools/*.ts) define the tools; CodehostTools.ts offers them.
 */
import type { Octokit } from "@octokit/rest"
import { Data, Effect, type Option, type Redacted } from "effect"
import type { CodehostCapability } from "../../domain/Agent.ts"
import type { GitAccess, ToolOutcome } from "../tools/ToolFamily.ts"
import type { Permissions } from "./GitHubApp.ts"
import type { GitHubFailed } from "./GitHubCall.ts"

/** A call that could not do what it was asked; `code` names why (the model reads the message). */
export class ToolError
  extends Data.TaggedError("CodehostToolError")<{ readonly code: string; readonly message: string }>
{
  static refused(message: string): ToolError {
    return new ToolError({ code: "codehost_refused", message })
  }
}

/** A failed call as the model reads it: `code: message`, the stream shows `{ error: { code, message } }`. */
export const errorOf = (code: string, message: string): ToolOutcome => ({
  output: { error: { code, message } },
  text: `${code}: ${message}`,
  isError: true
})

export interface Repo {
  readonly owner: string
  readonly repo: string
  /** `owner/repo` as granted. */
  readonly full: string
}

/** One call's view of the grant and of GitHub. */
export interface Scope {
  readonly grant: typeof CodehostCapability.Type
  /** The effective repositories (the connection's grant narrowed by the agent's). */
  readonly repositories: ReadonlyArray<string>
  /** Where repositories may be created or forked (access.owners). */
  readonly owners: ReadonlyArray<string>
  readonly threadId: string
  /** `input.repository` when it is granted. */
  readonly repository: (input: Input) => Effect.Effect<Repo, ToolError>
  /** A fresh installation token narrowed to `repositories` and `permissions`, as an Octokit. */
  readonly installation: (
    repositories: ReadonlyArray<string>,
    permissions: Permissions
  ) => Effect.Effect<Octokit, ToolError | GitHubFailed>
  /** The installing person's token (account tools). */
  readonly person: Effect.Effect<Octokit, ToolError>
  /** The thread's workspace git (absent without a managed workspace). */
  readonly git: GitAccess | undefined
  /** The web origin git remotes live on (`https://github.com`). */
  readonly webUrl: string
  /** The `Authorization` header git needs for `repository` (read, or write to push), from a fresh narrowed token. */
  readonly gitAuthorization: (
    repository: string,
    write: boolean
  ) => Effect.Effect<Redacted.Redacted, ToolError | GitHubFailed>
  /** Git's identity for commits made in the workspace (the app's bot). */
  readonly identity: { readonly name: string; readonly email: string }
  /** Claims `branch` of `repository` for this thread; false when another thread owns it. */
  readonly claimBranch: (repository: string, branch: string) => Effect.Effect<boolean>
  readonly recordPush: (repository: string, branch: string, sha: string) => Effect.Effect<void>
  /** Which thread published `branch` of `repository` through push_branch, and its last pushed SHA. */
  readonly branchOwner: (
    repository: string,
    branch: string
  ) => Effect.Effect<Option.Option<{ readonly threadId: string; readonly lastPushedSha: string | null }>>
}

/** `input.repository` when it is granted (`r`), with a fresh installation token narrowed to it and `permissions` (`gh`). */
export const repoClient = (
  scope: Scope,
  input: Input,
  permissions: Permissions
): Effect.Effect<{ readonly r: Repo; readonly gh: Octokit }, ToolError | GitHubFailed> =>
  Effect.flatMap(
    scope.repository(input),
    (r) => Effect.map(scope.installation([r.full], permissions), (gh) => ({ r, gh }))
  )

export interface Tool {
  readonly name: string
  readonly description: string
  readonly input: Readonly<Record<string, unknown>>
  /** The result carries text from outside (issue bodies, comments, ...): fenced for the model. */
  readonly untrusted: boolean
  readonly run: (scope: Scope, input: Input) => Effect.Effect<unknown, ToolError | GitHubFailed>
}

// ---- JSON schema builders ---------------------------------------------------

export const str = (description: string) => ({ type: "string", minLength: 1, description })
export const text = (description: string) => ({ type: "string", description })
export const int = (description: string) => ({ type: "integer", minimum: 1, description })
export const bool = (description: string) => ({ type: "boolean", description })
export const strs = (description: string) => ({ type: "array", items: { type: "string", minLength: 1 }, description })
export const object = (properties: Record<string, unknown>, required: ReadonlyArray<string>) => ({
  type: "object",
  properties,
  required,
  additionalProperties: false
})
export const repository = str("The repository, 'owner/name' (one the agent is granted).")
/** `repository` plus the given properties, `repository` and `required` required. */
export const inRepo = (properties: Record<string, unknown>, required: ReadonlyArray<string> = []) =>
  object({ repository, ...properties }, ["repository", ...required])

// ---- input accessors ----------------------------------------------------------

/** Input that passed the tool's JSON schema. */
export class Input {
  readonly raw: Readonly<Record<string, unknown>>
  constructor(raw: Readonly<Record<string, unknown>>) {
    this.raw = raw
  }
  str(key: string): string {
    return String(this.raw[key])
  }
  optStr(key: string): string | undefined {
    const v = this.raw[key]
    return typeof v === "string" ? v : undefined
  }
  int(key: string): number {
    return Number(this.raw[key])
  }
  optInt(key: string): number | undefined {
    const v = this.raw[key]
    return typeof v === "number" ? v : undefined
  }
  bool(key: string): boolean {
    return this.raw[key] === true
  }
  strs(key: string): ReadonlyArray<string> {
    const v = this.raw[key]
    return Array.isArray(v) ? v.map(String) : []
  }
}

/** GitHub's list pages: at most this many items per call. */
export const perPage = 30
