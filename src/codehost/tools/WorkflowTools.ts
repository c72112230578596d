/** Workflow automation (spec 4.8 catalog): 7 tools over GitHub Actions. Workflow metadata is untrusted. */
import type { Octokit } from "@octokit/rest"
import { Effect } from "effect"
import { Count, NonEmpty, optional, Strings } from "../../tools/ToolInput.ts"
import { call } from "../GitHubCall.ts"
import { type CodehostTool, inRepo, perPage, repoTool } from "../ToolKit.ts"
import { checkBase } from "./PullTools.ts"

const read = { actions: "read" } as const
const write = { actions: "write" } as const
const runId = Count("The workflow run's id.")

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

/** An action on one workflow run (cancel, re-run), answering `{ [done]: true, runId }`. */
const runAction = (
  name: string,
  description: string,
  done: string,
  act: (
    gh: Octokit,
    run: { owner: string; repo: string; run_id: number; request: { signal: AbortSignal } }
  ) => Promise<unknown>
) =>
  repoTool({
    name,
    description,
    input: inRepo({ runId }),
    permissions: write,
    run: ({ runId }, { gh, r }) =>
      Effect.as(
        call((signal) => act(gh, { owner: r.owner, repo: r.repo, run_id: runId, request: { signal } })),
        { [done]: true, runId }
      )
  })

export const workflowTools: ReadonlyArray<CodehostTool> = [
  repoTool({
    name: "codehost_list_workflows",
    description: "List the GitHub Actions workflows of a granted repository.",
    input: inRepo({}),
    untrusted: true,
    permissions: read,
    run: (_, { gh, r }) =>
      Effect.map(
        call((signal) =>
          gh.rest.actions.listRepoWorkflows({ owner: r.owner, repo: r.repo, per_page: 100, request: { signal } })
        ),
        ({ data }) => data.workflows.map((w) => ({ id: w.id, name: w.name, path: w.path, state: w.state }))
      )
  }),
  repoTool({
    name: "codehost_list_workflow_runs",
    description: "List recent workflow runs of a granted repository, newest first, optionally on one branch.",
    input: inRepo({ branch: optional(NonEmpty("Only runs on this branch.")) }),
    untrusted: true,
    permissions: read,
    run: ({ branch }, { gh, r }) =>
      Effect.map(
        call((signal) =>
          gh.rest.actions.listWorkflowRunsForRepo({
            owner: r.owner,
            repo: r.repo,
            per_page: perPage,
            ...(branch === undefined ? {} : { branch }),
            request: { signal }
          })
        ),
        ({ data }) => data.workflow_runs.map(runSummary)
      )
  }),
  repoTool({
    name: "codehost_get_workflow_run",
    description: "Get one workflow run of a granted repository: status, conclusion, branch and commit.",
    input: inRepo({ runId }),
    untrusted: true,
    permissions: read,
    run: ({ runId }, { gh, r }) =>
      Effect.map(
        call((signal) =>
          gh.rest.actions.getWorkflowRun({ owner: r.owner, repo: r.repo, run_id: runId, request: { signal } })
        ),
        ({ data }) => runSummary(data)
      )
  }),
  repoTool({
    name: "codehost_list_workflow_jobs",
    description: "List the jobs of a workflow run of a granted repository with their status and steps.",
    input: inRepo({ runId }),
    untrusted: true,
    permissions: read,
    run: ({ runId }, { gh, r }) =>
      Effect.map(
        call((signal) =>
          gh.rest.actions.listJobsForWorkflowRun({
            owner: r.owner,
            repo: r.repo,
            run_id: runId,
            per_page: 100,
            request: { signal }
          })
        ),
        ({ data }) =>
          data.jobs.map((j) => ({
            id: j.id,
            name: j.name,
            status: j.status,
            conclusion: j.conclusion,
            steps: (j.steps ?? []).map((s) => ({ name: s.name, status: s.status, conclusion: s.conclusion }))
          }))
      )
  }),
  repoTool({
    name: "codehost_trigger_workflow",
    description:
      "Start a workflow (workflow_dispatch) of a granted repository on a branch (one of the agent's base branches when they are set, else any branch).",
    input: inRepo({
      workflow: NonEmpty("The workflow's id or file name (e.g. ci.yml)."),
      ref: NonEmpty("The branch to run on."),
      inputs: optional(Strings("The workflow's inputs."))
    }),
    run: ({ inputs = {}, ref, workflow }, { r, scope }) =>
      Effect.gen(function*() {
        yield* checkBase(scope, ref, "Workflows may run only on")
        const gh = yield* scope.installation([r.full], write)
        yield* call((signal) =>
          gh.rest.actions.createWorkflowDispatch({
            owner: r.owner,
            repo: r.repo,
            workflow_id: workflow,
            ref,
            inputs,
            request: { signal }
          })
        )
        return { triggered: true, workflow, ref }
      })
  }),
  runAction(
    "codehost_cancel_workflow_run",
    "Cancel a workflow run of a granted repository.",
    "cancelled",
    (gh, run) => gh.rest.actions.cancelWorkflowRun(run)
  ),
  runAction(
    "codehost_rerun_workflow_run",
    "Re-run a workflow run of a granted repository.",
    "rerun",
    (gh, run) => gh.rest.actions.reRunWorkflow(run)
  )
]
