/**
 * The fake's check routes: the check runs (Checks API) and the combined
 * commit status (Statuses API) of a commit, from what a test reported on it
 * (`repo.checks`, `repo.statuses`). A ref that is not a SHA is read as a branch.
 */
import type { Request, Route } from "./FakeGitHub.ts"
import type { FakeState, Repo } from "./FakeState.ts"
import { withRepo } from "./RoutesIssues.ts"

const shaOf = (state: FakeState, repo: Repo, req: Request): string => {
  const ref = req.params["ref"] ?? ""
  return /^[0-9a-f]{40}$/.test(ref) ? ref : state.sha(repo, `refs/heads/${ref}`) ?? ref
}

/** The combined state as GitHub computes it: failure if any failed, pending if any is pending or none exist. */
const combined = (states: ReadonlyArray<string>): string =>
  states.some((s) => s === "failure" || s === "error")
    ? "failure"
    : states.length === 0 || states.some((s) => s === "pending")
    ? "pending"
    : "success"

export const routes: ReadonlyArray<Route> = [
  {
    method: "GET",
    path: "/repos/{owner}/{repo}/commits/{ref}/check-runs",
    auth: "installation",
    needs: { checks: "read" },
    handle: withRepo((state, repo, req) => {
      const sha = shaOf(state, repo, req)
      const runs = repo.checks.filter((c) => c.sha === sha)
      return {
        status: 200,
        body: {
          total_count: runs.length,
          check_runs: runs.map((c, i) => ({
            id: i + 1,
            name: c.name,
            head_sha: sha,
            status: c.status,
            conclusion: c.conclusion,
            details_url: "https://github.example/ci",
            output: {
              title: c.name,
              summary: c.summary,
              annotations_count: 0,
              annotations_url: "https://github.example/a",
              text: null
            }
          }))
        }
      }
    })
  },
  {
    method: "GET",
    path: "/repos/{owner}/{repo}/commits/{ref}/status",
    auth: "installation",
    needs: { statuses: "read" },
    handle: withRepo((state, repo, req) => {
      const sha = shaOf(state, repo, req)
      const statuses = repo.statuses.filter((s) => s.sha === sha)
      return {
        status: 200,
        body: {
          state: combined(statuses.map((s) => s.state)),
          sha,
          total_count: statuses.length,
          statuses: statuses.map((s, i) => ({
            id: i + 1,
            context: s.context,
            state: s.state,
            description: null,
            target_url: null
          }))
        }
      }
    })
  }
]
