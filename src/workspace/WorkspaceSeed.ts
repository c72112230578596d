/**
 * The seed of a managed workspace (spec 2.1.3 `seed: { type: 'git', url,
 * revision?, depth? }`): a git repository cloned into the workspace root when
 * the workspace is created. The clone runs INSIDE the sandbox as the
 * workspace's uid (never git on the host in a directory the sandbox writes),
 * and reaches the repository only through the workspace's egress proxy, on
 * which the seed's host is one of the hosts the service itself names
 * (NetworkPolicy `serviceHosts`).
 *
 * `revision` is a branch or a tag (`git clone --branch`) or else a commit
 * (fetched by name, then checked out detached); `depth` makes the clone
 * shallow. A workspace that already holds files is never seeded again (a
 * workspace that failed after its seed keeps its files). A clone that fails
 * leaves the workspace empty, so the next run tries again.
 */
import { Effect } from "effect"
import type { ManagedWorkspace } from "../../domain/Agent.ts"
import type { Sandbox, Workspace } from "./Sandbox.ts"
import { WorkspaceUnavailable } from "./WorkspaceUnavailable.ts"

export type Seed = NonNullable<ManagedWorkspace["seed"]>

/** The host the seed is cloned from, as the egress proxy matches it (IPv6 without brackets). */
export const hostOf = (seed: Seed): string | undefined => {
  if (!URL.canParse(seed.url)) return undefined
  const host = new URL(seed.url).hostname
  return host.startsWith("[") ? host.slice(1, -1) : host
}

/**
 * Exits 0 without doing anything when the workspace is not empty; on failure empties it and
 * exits 1 with git's reason on stderr. Arguments travel in the environment, never in the script.
 */
const script = `empty() { find . -mindepth 1 -delete 2>/dev/null; }
fail() { empty; exit 1; }
[ -z "$(ls -A)" ] || exit 0
depth=()
[ -n "$SVC_DEPTH" ] && depth=(--depth "$SVC_DEPTH")
if [ -z "$SVC_REVISION" ]; then git clone -q "\${depth[@]}" -- "$SVC_URL" . || fail; exit 0; fi
if err=$(git clone -q "\${depth[@]}" --branch "$SVC_REVISION" -- "$SVC_URL" . 2>&1); then exit 0; fi
case "$err" in *"not found in upstream"*) empty ;; *) printf '%s\\n' "$err" >&2; fail ;; esac
git -c init.defaultBranch=main init -q . && git remote add origin "$SVC_URL" &&
  git fetch -q "\${depth[@]}" --end-of-options origin "$SVC_REVISION" && git -c advice.detachedHead=false checkout -q --detach FETCH_HEAD || fail
`

/** At most the last `max` characters of git's reason, on one line. */
const reasonOf = (stderr: string, exitCode: number): string => {
  const text = stderr.trim().replace(/\s*\n\s*/g, "; ")
  return text === "" ? `git exited with code ${exitCode}` : text.length > 1_000 ? `…${text.slice(-1_000)}` : text
}

/** Clones `seed` into the (empty) workspace; a workspace that holds files is left as it is. */
export const clone = (
  sandbox: Sandbox["Service"],
  workspace: Workspace,
  seed: Seed
): Effect.Effect<void, WorkspaceUnavailable> =>
  Effect.gen(function*() {
    const result = yield* sandbox.exec(workspace, {
      command: script,
      env: {
        SVC_URL: seed.url,
        SVC_REVISION: seed.revision ?? "",
        SVC_DEPTH: seed.depth === undefined ? "" : String(seed.depth),
        GIT_TERMINAL_PROMPT: "0",
        // Even a loopback seed host goes through the egress proxy (the sandbox has no other way out).
        NO_PROXY: "",
        no_proxy: ""
      },
      timeoutMs: workspace.limits.maxTimeoutMs
    })
    if (result.exitCode === 0 && result.limit === undefined) return
    // Stopped by a limit before it could clean up: empty the workspace for the next try.
    if (result.limit !== undefined) {
      yield* sandbox.exec(workspace, { command: "find . -mindepth 1 -delete" }).pipe(
        Effect.ignore({ log: "Warn", message: "emptying the workspace after a stopped seed clone failed" })
      )
    }
    const reason = result.limit?.message ?? reasonOf(result.stderr, result.exitCode)
    return yield* new WorkspaceUnavailable({
      message: `the workspace's seed could not be cloned from ${seed.url}${
        seed.revision === undefined ? "" : ` at revision '${seed.revision}'`
      }: ${reason}`
    })
  })
