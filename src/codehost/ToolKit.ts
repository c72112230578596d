/**
 * What the code-hosting tools are made of (ToolDef.ts): the scope a call runs
 * in (the grant, per-operation tokens, the person's token), the tool error,
 * and the kit that takes each tool's preamble: `repoTool` reads the granted
 * repository (and mints a fresh installation token narrowed to it and the
 * permissions the tool needs), `personTool` acts as the installing person.
 * Group files (tools/*.ts) define the tools; CodehostTools.ts offers them.
 */
import type { Octokit } from "@octokit/rest"
import { Data, Effect, type Option, type Redacted, Schema } from "effect"
import type { CodehostCapability } from "../../domain/Agent.ts"
import type { MergePolicy } from "../../domain/Codehost.ts"
import * as ToolDef from "../tools/ToolDef.ts"
import type { GitAccess } from "../tools/ToolFamily.ts"
import { NonEmpty } from "../tools/ToolInput.ts"
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
  /** What a merge requires of the head commit's checks (the connection's mergePolicy). */
  readonly mergePolicy: MergePolicy
  readonly threadId: string
  /** `repository` ('owner/name', any case) when it is granted. */
  readonly repository: (repository: string) => Effect.Effect<Repo, ToolError>
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

/** How a code-hosting call fails: refused here, or GitHub's answer. */
export type Failure = ToolError | GitHubFailed

/** A code-hosting tool: it runs in the scope of the run's grant. */
export type CodehostTool = ToolDef.ToolDef<Scope, Failure>

/** A tool whose `run` has the call's scope. */
export const tool = <S extends ToolDef.Input, A>(
  config: ToolDef.Config<S> & { readonly run: (input: S["Type"], scope: Scope) => Effect.Effect<A, Failure> }
): CodehostTool => ToolDef.make({ ...config, handler: config.run })

export const repository = NonEmpty("The repository, 'owner/name' (one the agent is granted).")

/** An input with `repository` first, then `fields`. */
export const inRepo = <const F extends Schema.Struct.Fields>(fields: F) => Schema.Struct({ repository, ...fields })

/** The input of a tool on one repository. */
type RepoInput = ToolDef.Input & { readonly Type: { readonly repository: string } }

/**
 * A tool on one granted repository (its input made with `inRepo`). With `permissions`, `run` gets a
 * fresh installation token narrowed to the repository and them (`gh`); without, only the repository
 * (`r`), for a tool that checks more before it mints one or needs none.
 */
export function repoTool<S extends RepoInput, A>(
  config: ToolDef.Config<S> & {
    readonly permissions: Permissions
    readonly run: (
      input: S["Type"],
      client: { readonly r: Repo; readonly gh: Octokit; readonly scope: Scope }
    ) => Effect.Effect<A, Failure>
  }
): CodehostTool
export function repoTool<S extends RepoInput, A>(
  config: ToolDef.Config<S> & {
    readonly run: (input: S["Type"], at: { readonly r: Repo; readonly scope: Scope }) => Effect.Effect<A, Failure>
  }
): CodehostTool
export function repoTool<S extends RepoInput, A>(
  config:
    & ToolDef.Config<S>
    & (
      | {
        readonly permissions: Permissions
        readonly run: (
          input: S["Type"],
          client: { readonly r: Repo; readonly gh: Octokit; readonly scope: Scope }
        ) => Effect.Effect<A, Failure>
      }
      | {
        readonly run: (input: S["Type"], at: { readonly r: Repo; readonly scope: Scope }) => Effect.Effect<A, Failure>
      }
    )
): CodehostTool {
  return tool({
    ...config,
    run: (input: S["Type"], scope) =>
      Effect.flatMap(scope.repository(input.repository), (r) =>
        "permissions" in config
          ? Effect.flatMap(
            scope.installation([r.full], config.permissions),
            (gh) => config.run(input, { r, gh, scope })
          )
          : config.run(input, { r, scope }))
  })
}

/** A tool acting as the installing person (account tools): `run` gets their token as an Octokit. */
export const personTool = <S extends ToolDef.Input, A>(
  config: ToolDef.Config<S> & {
    readonly run: (
      input: S["Type"],
      client: { readonly gh: Octokit; readonly scope: Scope }
    ) => Effect.Effect<A, Failure>
  }
): CodehostTool =>
  tool({ ...config, run: (input, scope) => Effect.flatMap(scope.person, (gh) => config.run(input, { gh, scope })) })

/** GitHub's list pages: at most this many items per call. */
export const perPage = 30
