/**
 * The code-hosting tool catalog's names (spec 4.8, 8: 50 tools, all prefixed
 * `codehost_`), what each does to the outside world and whom it acts as:
 *
 * - `write`: changes something on GitHub (or publishes from the workspace);
 *   requests approval by default, journaled for write replay.
 * - `account`: acts as the installing person (snippets, repository create and
 *   fork): offered only with `access.account` and a healthy user grant.
 * - `search`: `codehost_search_repositories` reaches beyond the grant: offered
 *   only when `allowedTools` names it.
 * - `workspace`: runs git in the thread's managed workspace.
 *
 * The agent grant (capabilities.codehost) and the tool family both read this.
 */

export type Group = "repositories" | "issues" | "pulls" | "workspace" | "workflows" | "gists"

export interface CatalogEntry {
  readonly name: string
  readonly group: Group
  readonly write: boolean
  readonly account: boolean
  readonly search: boolean
  readonly workspace: boolean
}

const entries = (
  group: Group,
  names: string,
  flags: Partial<Omit<CatalogEntry, "name" | "group">> = {}
): ReadonlyArray<CatalogEntry> =>
  names.split(" ").map((name) => ({
    name: `codehost_${name}`,
    group,
    write: flags.write ?? false,
    account: flags.account ?? false,
    search: flags.search ?? false,
    workspace: flags.workspace ?? false
  }))

export const catalog: ReadonlyArray<CatalogEntry> = [
  ...entries(
    "repositories",
    "get_repository list_branches get_file_content list_commits get_commit get_blame search_code"
  ),
  ...entries("repositories", "create_branch create_or_update_file", { write: true }),
  ...entries("repositories", "create_repository fork_repository", { write: true, account: true }),
  ...entries("repositories", "search_repositories", { search: true }),
  ...entries("issues", "list_issues get_issue list_labels"),
  ...entries("issues", "create_issue comment_issue close_issue add_labels remove_label", { write: true }),
  ...entries(
    "pulls",
    "list_pull_requests get_pull_request list_pull_request_files list_pull_request_reviews get_pull_request_checks get_pull_request_review_threads"
  ),
  ...entries(
    "pulls",
    "create_pull_request comment_pull_request create_pull_request_review resolve_review_thread merge_pull_request",
    { write: true }
  ),
  ...entries("workspace", "checkout checkout_pull_request status", { workspace: true }),
  ...entries("workspace", "push_branch upsert_pull_request", { workspace: true, write: true }),
  ...entries("workflows", "list_workflows list_workflow_runs get_workflow_run list_workflow_jobs"),
  ...entries("workflows", "trigger_workflow cancel_workflow_run rerun_workflow_run", { write: true }),
  ...entries("gists", "list_gists get_gist list_gist_comments", { account: true }),
  ...entries("gists", "create_gist update_gist delete_gist comment_gist", { account: true, write: true })
]

const byName = new Map(catalog.map((e) => [e.name, e]))

export const entryOf = (name: string): CatalogEntry | undefined => byName.get(name)

export const isWriteTool = (name: string): boolean => byName.get(name)?.write === true
