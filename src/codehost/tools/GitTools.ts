/**
 * Workspace git (spec 4.8 catalog): checkout, checkout_pull_request, status,
 * push_branch, upsert_pull_request, run in the thread's managed workspace
 * through its GitAccess (an egress proxy of the command only, adding the
 * credential there). The remote is the plain https URL of the repository;
 * nothing of the credential reaches the sandbox. A push publishes exactly one
 * branch (`refs/heads/<b>:refs/heads/<b>`, no force, no tags, no deletion) that
 * this thread owns; the prefix, base-branch, ownership and configuration
 * checks fail closed before anything is sent.
 */
import { Effect, Option, type Redacted } from "effect"
import type { GitResult } from "../../tools/ToolFamily.ts"
import { Count, NonEmpty, optional, Text } from "../../tools/ToolInput.ts"
import { call, withoutCredentials } from "../GitHubCall.ts"
import { validBranch } from "../GitRefs.ts"
import { type CodehostTool, inRepo, type Repo, repoTool, type Scope, ToolError } from "../ToolKit.ts"
import { checkBase } from "./PullTools.ts"
import { checkWritableBranch } from "./RepoTools.ts"

const path = optional(
  NonEmpty("Directory of the clone, relative to the workspace root (default: the repository's name).")
)

const dirOf = (input: { readonly path?: string }, r: Repo) => input.path ?? r.repo

/** Runs a script of the git group; arguments travel in the environment, never in the script. */
const run = (
  scope: Scope,
  r: Repo,
  script: string,
  env: Record<string, string>,
  authorization: Redacted.Redacted | undefined
) =>
  Effect.gen(function*() {
    const git = scope.git
    if (git === undefined) return yield* ToolError.refused("Workspace git needs the agent's managed workspace.")
    const origin = new URL(scope.webUrl)
    // A command reaching an https origin speaks http to the proxy, which re-originates it over TLS with the
    // credential (the clone's remote stays the https URL); commands that stay local get no rewrite.
    const rewrite = origin.protocol === "https:" && authorization !== undefined
      ? {
        GIT_CONFIG_COUNT: "1",
        GIT_CONFIG_KEY_0: `url.http://${origin.host}/.insteadOf`,
        GIT_CONFIG_VALUE_0: `https://${origin.host}/`
      }
      : {}
    const result: GitResult = yield* git.exec({
      command: `set -eu\n${script}`,
      env: {
        ...env,
        ...rewrite,
        SVC_URL: `${scope.webUrl}/${r.owner}/${r.repo}.git`,
        SVC_NAME: scope.identity.name,
        SVC_EMAIL: scope.identity.email
      },
      origin: { url: scope.webUrl, authorization }
    }).pipe(Effect.mapError((e) => new ToolError({ code: "workspace_unavailable", message: e.message })))
    if (result.exitCode !== 0) {
      // git repeats what the remote said (`remote: ...` lines): GitHub's text, scrubbed like its error bodies.
      return yield* new ToolError({
        code: "codehost_git_failed",
        message: withoutCredentials((result.stderr.trim() || `git exited with code ${result.exitCode}`).slice(-2000))
      })
    }
    return result.stdout
  })

/** A clone at $SVC_DIR of $SVC_URL (fetched again when it is there), with the bot's identity. */
const ensureClone = `dir="$SVC_DIR"
case "$dir" in /*|*..*) echo "path must stay inside the workspace" >&2; exit 3 ;; esac
if [ -d "$dir/.git" ]; then
  cd "$dir"
  [ "$(git config --get remote.origin.url)" = "$SVC_URL" ] || { echo "$dir holds a clone of another repository" >&2; exit 3; }
  git fetch -q --prune origin
else
  [ -z "$(ls -A "$dir" 2>/dev/null)" ] || { echo "$dir exists and is not an empty directory" >&2; exit 3; }
  git clone -q -- "$SVC_URL" "$dir"
  cd "$dir"
fi
git config user.name "$SVC_NAME"
git config user.email "$SVC_EMAIL"
`

const describe = `printf '%s\\n%s\\n' "$(git rev-parse --abbrev-ref HEAD)" "$(git rev-parse HEAD)"`

const lines = (out: string) => out.trim().split("\n")

const state = Effect.fn("GitTools.state")(function*(scope: Scope, r: Repo, dir: string) {
  const out = yield* run(
    scope,
    r,
    `cd "$SVC_DIR" || exit 3
[ "$(git config --get remote.origin.url)" = "$SVC_URL" ] || { echo "$SVC_DIR holds a clone of another repository" >&2; exit 3; }
if git config --get-regexp '^url\\..*\\.(insteadof|pushinsteadof)$' >/dev/null; then echo "the clone's git config rewrites URLs (url.*.insteadOf): refused" >&2; exit 3; fi
${describe}`,
    { SVC_DIR: dir },
    undefined
  )
  const [branch, sha] = lines(out)
  return { branch, sha }
})

export const gitTools: ReadonlyArray<CodehostTool> = [
  repoTool({
    name: "codehost_checkout",
    description:
      "Clone a granted repository into the workspace (or fetch it again), optionally check out a branch, tag or commit, and optionally start a new branch there (under the agent's branch prefix). Commit with git in bash; publish with codehost_push_branch.",
    input: inRepo({
      path,
      ref: optional(NonEmpty("Branch, tag or commit to check out (default: the default branch).")),
      newBranch: optional(NonEmpty("Create and switch to this new local branch."))
    }),
    run: (input, { r, scope }) =>
      Effect.gen(function*() {
        const { newBranch } = input
        if (newBranch !== undefined) {
          if (!validBranch(newBranch)) {
            return yield* ToolError.refused(`'${newBranch}' is not a branch name git accepts.`)
          }
          yield* checkWritableBranch(scope, newBranch)
        }
        const dir = dirOf(input, r)
        const out = yield* run(
          scope,
          r,
          `${ensureClone}
if [ -n "$SVC_REF" ]; then
  if git show-ref -q --verify "refs/remotes/origin/$SVC_REF"; then git checkout -q -B "$SVC_REF" "origin/$SVC_REF"; else git -c advice.detachedHead=false checkout -q --detach "$SVC_REF"; fi
fi
if [ -n "$SVC_NEW" ]; then git checkout -q -b "$SVC_NEW"; fi
${describe}`,
          { SVC_DIR: dir, SVC_REF: input.ref ?? "", SVC_NEW: newBranch ?? "" },
          yield* scope.gitAuthorization(r.full, false)
        )
        const [branch, sha] = lines(out)
        return { repository: r.full, path: dir, branch, sha }
      })
  }),
  repoTool({
    name: "codehost_checkout_pull_request",
    description:
      "Check out a pull request of a granted repository in the workspace at the head SHA GitHub reports: its branch when it lives in the repository, else (a pull request from a fork) the pull request's head as the local branch pull/<number>.",
    input: inRepo({ number: Count("The pull request number."), path }),
    permissions: { pull_requests: "read" },
    run: (input, { gh, r, scope }) =>
      Effect.gen(function*() {
        const { data } = yield* call((signal) =>
          gh.rest.pulls.get({ owner: r.owner, repo: r.repo, pull_number: input.number, request: { signal } })
        )
        // A fork's branch is not on the granted remote: GitHub keeps the head at refs/pull/<n>/head of the repository itself.
        const fork = data.head.repo === null
          ? "(a deleted fork)"
          : data.head.repo.full_name.toLowerCase() === r.full.toLowerCase()
          ? undefined
          : data.head.repo.full_name
        const local = fork === undefined ? data.head.ref : `pull/${data.number}`
        const refspec = fork === undefined
          ? `refs/heads/${data.head.ref}:refs/remotes/origin/${data.head.ref}`
          : `refs/pull/${data.number}/head`
        const dir = dirOf(input, r)
        const out = yield* run(
          scope,
          r,
          `${ensureClone}
git fetch -q origin "$SVC_REFSPEC"
[ "$(git rev-parse FETCH_HEAD)" = "$SVC_SHA" ] || { echo "the pull request moved since GitHub reported head $SVC_SHA; look at it again" >&2; exit 4; }
git checkout -q -B "$SVC_LOCAL" FETCH_HEAD
${describe}`,
          { SVC_DIR: dir, SVC_REFSPEC: refspec, SVC_LOCAL: local, SVC_SHA: data.head.sha },
          yield* scope.gitAuthorization(r.full, false)
        )
        const [branch, sha] = lines(out)
        return {
          repository: r.full,
          path: dir,
          number: data.number,
          branch,
          sha,
          base: data.base.ref,
          ...(fork === undefined ? {} : { fork })
        }
      })
  }),
  repoTool({
    name: "codehost_status",
    description:
      "The state of a clone in the workspace: current branch, head SHA and changed files (git status), without contacting GitHub.",
    input: inRepo({ path }),
    run: (input, { r, scope }) =>
      Effect.gen(function*() {
        const dir = dirOf(input, r)
        const out = yield* run(
          scope,
          r,
          `cd "$SVC_DIR" || exit 3
${describe}
git status --porcelain=v1`,
          { SVC_DIR: dir },
          undefined
        )
        const [branch, sha, ...changes] = out.split("\n")
        return { repository: r.full, path: dir, branch, sha, changes: changes.filter((l) => l !== "") }
      })
  }),
  repoTool({
    name: "codehost_push_branch",
    description:
      "Publish the clone's current branch to GitHub (that one branch only; no force, no tags). The branch must be under the agent's branch prefix, not a base or default branch, and new on GitHub or already published by this thread.",
    input: inRepo({ path }),
    run: (input, { r, scope }) =>
      Effect.gen(function*() {
        const dir = dirOf(input, r)
        const { branch, sha } = yield* state(scope, r, dir)
        if (branch === "HEAD" || !validBranch(branch)) {
          return yield* ToolError.refused(
            "The clone is not on a branch (detached HEAD): create one with git switch -c or codehost_checkout newBranch."
          )
        }
        yield* checkWritableBranch(scope, branch)
        const gh = yield* scope.installation([r.full], { contents: "read" })
        const repo = yield* call((signal) => gh.rest.repos.get({ owner: r.owner, repo: r.repo, request: { signal } }))
        const protectedBranches = [repo.data.default_branch, ...(scope.grant.git?.baseBranches ?? [])]
        if (protectedBranches.includes(branch)) {
          return yield* ToolError.refused(
            `'${branch}' is a base or default branch; push your work on a branch of its own.`
          )
        }
        const owner = yield* scope.branchOwner(r.full, branch)
        if (Option.isSome(owner) && owner.value.threadId !== scope.threadId) {
          return yield* ToolError.refused(`'${branch}' was published by another thread; use a branch of your own.`)
        }
        if (Option.isNone(owner)) {
          const exists = yield* call((signal) =>
            gh.rest.repos.getBranch({ owner: r.owner, repo: r.repo, branch, request: { signal } })
          ).pipe(
            Effect.as(true),
            Effect.catchIf((e) => e.status === 404, () => Effect.succeed(false))
          )
          if (exists) {
            return yield* ToolError.refused(
              `'${branch}' already exists on GitHub and was not published by this thread; use a new branch.`
            )
          }
          if (!(yield* scope.claimBranch(r.full, branch))) {
            return yield* ToolError.refused(`'${branch}' was just claimed by another thread; use a new branch.`)
          }
        }
        yield* run(
          scope,
          r,
          `cd "$SVC_DIR" || exit 3
git push -q --porcelain --no-follow-tags "$SVC_URL" "refs/heads/$SVC_BRANCH:refs/heads/$SVC_BRANCH"`,
          { SVC_DIR: dir, SVC_BRANCH: branch },
          yield* scope.gitAuthorization(r.full, true)
        )
        yield* scope.recordPush(r.full, branch, sha)
        return { repository: r.full, branch, sha, pushed: true }
      })
  }),
  repoTool({
    name: "codehost_upsert_pull_request",
    description:
      "Open a pull request from a branch this thread pushed (default: the clone's current branch) into `base`, or update the title and body of the one already open.",
    input: inRepo({
      path,
      branch: optional(NonEmpty("The pushed branch (default: the clone's current branch).")),
      base: NonEmpty("The branch to merge into."),
      title: NonEmpty("Title."),
      body: optional(Text("Description (Markdown)."))
    }),
    run: (input, { r, scope }) =>
      Effect.gen(function*() {
        const { base, body = "", title } = input
        yield* checkBase(scope, base)
        const branch = input.branch ?? (yield* state(scope, r, dirOf(input, r))).branch
        const owner = yield* scope.branchOwner(r.full, branch)
        if (Option.isNone(owner) || owner.value.threadId !== scope.threadId || owner.value.lastPushedSha === null) {
          return yield* ToolError.refused(
            `'${branch}' was not pushed by this thread; publish it with codehost_push_branch first.`
          )
        }
        const gh = yield* scope.installation([r.full], { pull_requests: "write" })
        const open = yield* call((signal) =>
          gh.rest.pulls.list({
            owner: r.owner,
            repo: r.repo,
            head: `${r.owner}:${branch}`,
            state: "open",
            request: { signal }
          })
        )
        const existing = open.data.find((p) => p.base.ref === base)
        const { data } = existing === undefined
          ? yield* call((signal) =>
            gh.rest.pulls.create({
              owner: r.owner,
              repo: r.repo,
              head: branch,
              base,
              title,
              body,
              request: { signal }
            })
          )
          : yield* call((signal) =>
            gh.rest.pulls.update({
              owner: r.owner,
              repo: r.repo,
              pull_number: existing.number,
              title,
              body,
              request: { signal }
            })
          )
        return {
          number: data.number,
          html_url: data.html_url,
          head: branch,
          headSha: data.head.sha,
          base,
          created: existing === undefined
        }
      })
  })
]
