/**
 * The merge policy of spec 4.8 ("merge also checks ... any configured
 * status/check policy"): before codehost_merge_pull_request merges, the head
 * commit's check runs and commit statuses are read and held against the
 * connection's mergePolicy. `verdict` is the pure rule; `requireGreen` reads
 * GitHub and refuses with the checks that are missing, pending or failed.
 */
import type { Octokit } from "@octokit/rest"
import { Effect } from "effect"
import type { MergePolicy } from "../../domain/Codehost.ts"
import { call, type GitHubFailed } from "./GitHubCall.ts"
import { type Repo, ToolError } from "./ToolKit.ts"

/** One check as the policy sees it: a check run (by name) or a status (by context). */
export interface ReportedCheck {
  readonly name: string
  readonly state: "green" | "pending" | "failed"
}

const greenConclusions = new Set(["success", "neutral", "skipped"])

export const fromCheckRun = (run: { name: string; status: string; conclusion: string | null }): ReportedCheck => ({
  name: run.name,
  state: run.status !== "completed"
    ? "pending"
    : greenConclusions.has(run.conclusion ?? "")
    ? "green"
    : "failed"
})

export const fromStatus = (status: { context: string; state: string }): ReportedCheck => ({
  name: status.context,
  state: status.state === "success" ? "green" : status.state === "pending" ? "pending" : "failed"
})

/** Why the policy refuses a merge of a commit with these checks; undefined when it allows it. */
export const verdict = (policy: MergePolicy, checks: ReadonlyArray<ReportedCheck>): string | undefined => {
  const missing = policy.requiredChecks.filter((name) => !checks.some((c) => c.name === name))
  const considered = policy.allChecksGreen ? checks : checks.filter((c) => policy.requiredChecks.includes(c.name))
  const pending = considered.filter((c) => c.state === "pending").map((c) => c.name)
  const failed = considered.filter((c) => c.state === "failed").map((c) => c.name)
  const problems = [
    failed.length > 0 ? `failed: ${failed.join(", ")}` : undefined,
    pending.length > 0 ? `not finished: ${pending.join(", ")}` : undefined,
    missing.length > 0 ? `required but not reported: ${missing.join(", ")}` : undefined
  ].filter((p) => p !== undefined)
  return problems.length === 0 ? undefined : problems.join("; ")
}

/** Whether the policy asks anything of the checks at all (no reads when it does not). */
const demands = (policy: MergePolicy): boolean => policy.allChecksGreen || policy.requiredChecks.length > 0

/** Reads the checks of `sha` and refuses the merge when the policy does not hold. */
export const requireGreen = (
  gh: Octokit,
  r: Repo,
  sha: string,
  policy: MergePolicy
): Effect.Effect<void, ToolError | GitHubFailed> =>
  !demands(policy) ? Effect.void : Effect.gen(function*() {
    const runs = yield* call((signal) =>
      gh.rest.checks.listForRef({ owner: r.owner, repo: r.repo, ref: sha, per_page: 100, request: { signal } })
    )
    const statuses = yield* call((signal) =>
      gh.rest.repos.getCombinedStatusForRef({
        owner: r.owner,
        repo: r.repo,
        ref: sha,
        per_page: 100,
        request: { signal }
      })
    )
    const checks = [...runs.data.check_runs.map(fromCheckRun), ...statuses.data.statuses.map(fromStatus)]
    const problem = verdict(policy, checks)
    if (problem !== undefined) {
      return yield* ToolError.refused(
        `The merge policy of this connection requires green checks on ${sha}: ${problem}. Wait for the checks, or fix them, and inspect the pull request again.`
      )
    }
  })
