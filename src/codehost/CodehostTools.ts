/**
 * The code-hosting tools of one run (spec 4.8) as a tool family: the catalog
 * filtered by the agent's grant (allowedTools / blockedTools;
 * `codehost_search_repositories` only when named; account tools only with
 * `access.account` and a healthy user grant; workspace git only with the
 * thread's workspace), offered only while the connection is `ready`. The
 * tools are definitions (ToolKit.ts on ToolDef.ts): each call's input is
 * decoded with its Schema, it mints its own installation token narrowed to
 * the repositories and permissions it needs, and answers a result the model
 * reads fenced when it carries text from outside. Write tools request approval by default (approval once / always /
 * never, gatedTools) and go through the write journal (WriteJournal.ts). With
 * a one-repository grant, the repository's instruction files are loaded.
 */
import { Context, Effect, Layer, Option, Redacted } from "effect"
import type { CodehostCapability } from "../../domain/Agent.ts"
import type { Principal } from "../../domain/Principal.ts"
import { CodehostRepo } from "../store/CodehostRepo.ts"
import { nowIso } from "../Time.ts"
import * as ToolDef from "../tools/ToolDef.ts"
import type { GitAccess, ToolFamily } from "../tools/ToolFamily.ts"
import * as ToolOutcome from "../tools/ToolOutcome.ts"
import { entryOf } from "./CatalogNames.ts"
import { accountTools, mergePolicyOf, repositoryTools } from "./ConnectionRules.ts"
import { CodehostConnections, type LoadedConnection } from "./Connections.ts"
import type { GitHubFailed } from "./GitHubCall.ts"
import { loadInstructions } from "./Instructions.ts"
import { type CodehostTool, type Repo, type Scope, ToolError } from "./ToolKit.ts"
import { gistTools } from "./tools/GistTools.ts"
import { gitTools } from "./tools/GitTools.ts"
import { issueTools } from "./tools/IssueTools.ts"
import { pullTools } from "./tools/PullTools.ts"
import { repoTools } from "./tools/RepoTools.ts"
import { workflowTools } from "./tools/WorkflowTools.ts"
import * as WriteJournal from "./WriteJournal.ts"

export const allTools: ReadonlyArray<CodehostTool> = [
  ...repoTools,
  ...issueTools,
  ...pullTools,
  ...gitTools,
  ...workflowTools,
  ...gistTools
]

const isWrite = (name: string) => entryOf(name)?.write === true

/** A GitHub failure as the model reads it; a write that may have reached GitHub is of unknown outcome. */
const githubError = (e: GitHubFailed, write: boolean): ToolOutcome.ToolOutcome =>
  e.status === 0 && write
    ? ToolOutcome.failure(
      "codehost_action_outcome_unknown",
      `GitHub did not answer (${e.message}); the action may or may not have happened. Read the current state before retrying.`
    )
    : ToolOutcome.failure(
      "codehost_github_error",
      e.status === 0 ? e.message : `GitHub answered ${e.status}: ${e.message}`
    )

export interface OpenOptions {
  readonly principal: Principal
  readonly runId: string
  readonly threadId: string
  readonly grant: typeof CodehostCapability.Type
  /** The thread's workspace, for the workspace git tools (absent: they are not offered). */
  readonly git: GitAccess | undefined
}

export interface Opened {
  /** With the instruction files of a one-repository grant, as context for the model. */
  readonly family: ToolFamily
  /** Why no tool is offered (the connection is gone or not ready). */
  readonly problem?: string
}

const make = Effect.gen(function*() {
  const connections = yield* CodehostConnections
  const repo = yield* CodehostRepo

  const open = Effect.fn("CodehostTools.open")(function*(options: OpenOptions) {
    const empty = (problem: string): Opened => ({
      family: ToolDef.family([], { context: () => undefined }),
      problem
    })
    const gh = yield* Effect.option(connections.app)
    if (Option.isNone(gh)) {
      return empty(
        "No GitHub App is configured on this deployment: the code-hosting tools are not available (codehost_unconfigured)."
      )
    }
    const loaded = yield* Effect.option(connections.crud.load(options.principal, options.grant.connectionId))
    if (Option.isNone(loaded)) {
      return empty(
        `The code-hosting connection ${options.grant.connectionId} no longer exists: its tools are not available.`
      )
    }
    const state = loaded.value.config
    const installationId = state.installationId
    if (!repositoryTools(state) || installationId === null) {
      return empty(
        `The code-hosting connection ${options.grant.connectionId} is ${state.status}${
          state.statusReason === null ? "" : ` (${state.statusReason})`
        }: its tools are not available.`
      )
    }
    const { grant } = options
    const repositories = connections.effectiveRepositories(state, grant.repositories)
    /** The person's token now (renewed when about to expire); a renewal GitHub refused revokes their grant. */
    const personToken = (current: LoadedConnection) =>
      Effect.gen(function*() {
        const grant = yield* connections.userTokens.current(options.principal, current)
        if (grant._tag === "Token") return grant.token
        if (grant._tag === "Refused") {
          yield* connections.revokeUserGrant(options.principal, current.row.id, grant.reason)
        }
        const message = grant._tag === "None"
          ? "The connection holds no authorization of the installing person."
          : grant.reason
        return yield* new ToolError({ code: "codehost_user_grant_unavailable", message })
      })
    const personOffered = accountTools(state) && Option.isSome(yield* Effect.option(personToken(loaded.value)))
    const allowed = grant.allowedTools === undefined ? undefined : new Set(grant.allowedTools)
    const blocked = new Set(grant.blockedTools ?? [])
    const offered = allTools.filter((tool) => {
      const entry = entryOf(tool.name)
      if (entry === undefined || blocked.has(tool.name) || (allowed !== undefined && !allowed.has(tool.name))) {
        return false
      }
      if (entry.search) return allowed?.has(tool.name) === true
      if (entry.account) return personOffered
      if (entry.workspace) return options.git !== undefined
      return true
    })
    const scope: Scope = {
      grant,
      repositories,
      owners: state.access.owners,
      mergePolicy: mergePolicyOf(state),
      threadId: options.threadId,
      repository: (wanted) => {
        const granted = repositories.find((r) => r.toLowerCase() === wanted.toLowerCase())
        if (granted === undefined) {
          return Effect.fail(
            ToolError.refused(
              `'${wanted}' is not granted to this agent; granted: ${repositories.join(", ") || "none"}.`
            )
          )
        }
        const [owner, name] = granted.split("/")
        return Effect.succeed<Repo>({ owner, repo: name, full: granted })
      },
      installation: (repos, permissions) =>
        Effect.map(gh.value.token(installationId, { repositories: repos, permissions }), gh.value.octokit),
      // Looked up at each call: a run may outlive the person's token (8 hours).
      person: Effect.gen(function*() {
        const current = yield* Effect.mapError(
          connections.crud.load(options.principal, options.grant.connectionId),
          (e) => ToolError.refused(e.message)
        )
        if (!accountTools(current.config)) {
          return yield* ToolError.refused(
            "Account tools need access.account and a healthy user grant on the connection."
          )
        }
        return gh.value.octokit(yield* personToken(current))
      }),
      branchOwner: repo.branchOwner,
      git: options.git,
      webUrl: gh.value.config.webUrl,
      gitAuthorization: (repository, write) =>
        Effect.map(
          gh.value.token(installationId, {
            repositories: [repository],
            permissions: { contents: write ? "write" : "read" }
          }),
          (token) => Redacted.make(`Basic ${Buffer.from(`x-access-token:${Redacted.value(token)}`).toString("base64")}`)
        ),
      identity: {
        name: `${gh.value.config.slug}[bot]`,
        email: `${gh.value.config.appId}+${gh.value.config.slug}[bot]@users.noreply.github.com`
      },
      claimBranch: (repository, branch) =>
        Effect.flatMap(nowIso, (now) => repo.claimBranch(repository, branch, options.threadId, now)),
      recordPush: (repository, branch, sha) =>
        Effect.flatMap(nowIso, (now) => repo.recordPush(repository, branch, sha, now))
    }

    const instructions = repositories.length === 1 && offered.some((t) =>
        t.name === "codehost_get_file_content" || t.name === "codehost_checkout"
      )
      ? yield* loadInstructions(scope, repositories[0]).pipe(
        Effect.catch((e) =>
          Effect.as(
            Effect.logWarning(`instructions of ${repositories[0]} not loaded; the run goes on without them`, e),
            []
          )
        )
      )
      : []

    const journal = WriteJournal.make(repo, options.runId)
    const family = ToolDef.family(offered, {
      context: () => scope,
      recover: (e, name) =>
        e._tag === "CodehostToolError" ? ToolOutcome.failure(e.code, e.message) : githubError(e, isWrite(name)),
      around: (name, call, run) => (isWrite(name) ? journal.guard(name, call.id, run) : run),
      policyOf: (name) =>
        isWrite(name)
          // Write tools request approval by default; gatedTools narrows an explicit once/always mode.
          ? { approval: grant.approval ?? "always", gatedTools: grant.gatedTools ?? null, originalName: name }
          : { approval: null, gatedTools: null, originalName: name },
      instructions
    })
    return { family } satisfies Opened
  })

  return { open }
})

export class CodehostTools extends Context.Service<CodehostTools, Effect.Success<typeof make>>()("svc/CodehostTools") {
  static readonly layer = Layer.effect(CodehostTools)(make).pipe(Layer.provide(CodehostRepo.layer))
}
