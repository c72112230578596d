/** Workflow automation (spec 4.8 catalog): 7 tools over GitHub Actions. Workflow metadata is untrusted. */
import { Effect } from "effect"
import { call } from "../GitHubCall.ts"
import { inRepo, int, perPage, repoClient, str, type Tool } from "../ToolKit.ts"
import { checkBase } from "./PullTools.ts"

const read = { actions: "read" } as const
const write = { actions: "write" } as const
const runId = int("The workflow run's id.")

const runSummary = (
  r: {
    id: number
    name?: string | null | undefined
    status: string | null
    conclusion: string | null
    head_branch: string | null
    head_sha: string
    html_url: string
    workflow_id: number
  }
) => ({
  id: r.id,
  name: r.name ?? null,
  status: r.status,
  conclusion: r.conclusion,
  branch: r.head_branch,
  sha: r.head_sha,
  workflow_id: r.workflow_id,
  html_url: r.html_url
})

export const workflowTools: ReadonlyArray<Tool> = [
  {
    name: "codehost_list_workflows",
    description: "List the GitHub Actions workflows of a granted repository.",
    input: inRepo({}),
    untrusted: true,
    run: (scope, input) =>
      Effect.gen(function*() {
        const { r, gh } = yield* repoClient(scope, input, read)
        const { data } = yield* call((signal) =>
          gh.rest.actions.listRepoWorkflows({ owner: r.owner, repo: r.repo, per_page: 100, request: { signal } })
        )
        return data.workflows.map((w) => ({ id: w.id, name: w.name, path: w.path, state: w.state }))
      })
  },
  {
    name: "codehost_list_workflow_runs",
    description: "List recent workflow runs of a granted repository, newest first, optionally on one branch.",
    input: inRepo({ branch: str("Only runs on this branch.") }),
    untrusted: true,
    run: (scope, input) =>
      Effect.gen(function*() {
        const { r, gh } = yield* repoClient(scope, input, read)
        const branch = input.optStr("branch")
        const { data } = yield* call((signal) =>
          gh.rest.actions.listWorkflowRunsForRepo({
            owner: r.owner,
            repo: r.repo,
            per_page: perPage,
            ...(branch === undefined ? {} : { branch }),
            request: { signal }
          })
        )
        return data.workflow_runs.map(runSummary)
      })
  },
  {
    name: "codehost_get_workflow_run",
    description: "Get one workflow run of a granted repository: status, conclusion, branch and commit.",
    input: inRepo({ runId }, ["runId"]),
    untrusted: true,
    run: (scope, input) =>
      Effect.gen(function*() {
        const { r, gh } = yield* repoClient(scope, input, read)
        const { data } = yield* call((signal) =>
          gh.rest.actions.getWorkflowRun({
            owner: r.owner,
            repo: r.repo,
            run_id: input.int("runId"),
            request: { signal }
          })
        )
        return runSummary(data)
      })
  },
  {
    name: "codehost_list_workflow_jobs",
    description: "List the jobs of a workflow run of a granted repository with their status and steps.",
    input: inRepo({ runId }, ["runId"]),
    untrusted: true,
    run: (scope, input) =>
      Effect.gen(function*() {
        const { r, gh } = yield* repoClient(scope, input, read)
        const { data } = yield* call((signal) =>
          gh.rest.actions.listJobsForWorkflowRun({
            owner: r.owner,
            repo: r.repo,
            run_id: input.int("runId"),
            per_page: 100,
            request: { signal }
          })
        )
        return data.jobs.map((j) => ({
          id: j.id,
          name: j.name,
          status: j.status,
          conclusion: j.conclusion,
          steps: (j.steps ?? []).map((s) => ({ name: s.name, status: s.status, conclusion: s.conclusion }))
        }))
      })
  },
  {
    name: "codehost_trigger_workflow",
    description:
      "Start a workflow (workflow_dispatch) of a granted repository on a branch (one of the agent's base branches when they are set, else any branch).",
    input: inRepo({
      workflow: str("The workflow's id or file name (e.g. ci.yml)."),
      ref: str("The branch to run on."),
      inputs: { type: "object", additionalProperties: { type: "string" }, description: "The workflow's inputs." }
    }, ["workflow", "ref"]),
    untrusted: false,
    run: (scope, input) =>
      Effect.gen(function*() {
        const r = yield* scope.repository(input)
        yield* checkBase(scope, input.str("ref"), "Workflows may run only on")
        const gh = yield* scope.installation([r.full], write)
        const inputs = (typeof input.raw["inputs"] === "object" && input.raw["inputs"] !== null
          ? input.raw["inputs"]
          : {}) as Record<string, string>
        yield* call((signal) =>
          gh.rest.actions.createWorkflowDispatch({
            owner: r.owner,
            repo: r.repo,
            workflow_id: input.str("workflow"),
            ref: input.str("ref"),
            inputs,
            request: { signal }
          })
        )
        return { triggered: true, workflow: input.str("workflow"), ref: input.str("ref") }
      })
  },
  {
    name: "codehost_cancel_workflow_run",
    description: "Cancel a workflow run of a granted repository.",
    input: inRepo({ runId }, ["runId"]),
    untrusted: false,
    run: (scope, input) =>
      Effect.gen(function*() {
        const { r, gh } = yield* repoClient(scope, input, write)
        yield* call((signal) =>
          gh.rest.actions.cancelWorkflowRun({
            owner: r.owner,
            repo: r.repo,
            run_id: input.int("runId"),
            request: { signal }
          })
        )
        return { cancelled: true, runId: input.int("runId") }
      })
  },
  {
    name: "codehost_rerun_workflow_run",
    description: "Re-run a workflow run of a granted repository.",
    input: inRepo({ runId }, ["runId"]),
    untrusted: false,
    run: (scope, input) =>
      Effect.gen(function*() {
        const { r, gh } = yield* repoClient(scope, input, write)
        yield* call((signal) =>
          gh.rest.actions.reRunWorkflow({
            owner: r.owner,
            repo: r.repo,
            run_id: input.int("runId"),
            request: { signal }
          })
        )
        return { rerun: true, runId: input.int("runId") }
      })
  }
]
