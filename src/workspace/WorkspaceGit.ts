/**
 * Git operations of the code-hosting tools in a managed workspace (the
 * `git` capability of the workspace family, src/tools/ToolFamily.ts
 * GitAccess): the command runs in the sandbox as any command does, but online
 * through an egress proxy of its own (socket `<id>.git.sock`) that reaches the
 * origin's host only, whatever the workspace's network mode (so in
 * `restricted` mode the code host is reachable for these commands only), and
 * that adds the origin's credential to its requests. The credential lives in
 * that proxy, in the service: it is withdrawn, then the proxy closed, when the
 * command ends. The sandbox never sees it: not in its environment, argv,
 * files, git config or remote URLs.
 */
import { Effect, Redacted } from "effect"
import { type GitAccess, type GitOperation, SpillFailed } from "../tools/ToolFamily.ts"
import * as EgressProxy from "./EgressProxy.ts"
import type { Limits } from "./ResourceClass.ts"
import type { Sandbox } from "./Sandbox.ts"

export interface WorkspaceGitOptions {
  readonly sandbox: Sandbox["Service"]
  readonly id: string
  readonly limits: Limits
  readonly allowPrivate: boolean
  readonly resolve: EgressProxy.Resolve
}

export const make = (options: WorkspaceGitOptions): GitAccess => ({
  exec: (operation: GitOperation) =>
    Effect.scoped(
      Effect.gen(function*() {
        const { sandbox, id } = options
        const origin = new URL(operation.origin.url)
        const scheme = origin.protocol === "https:" ? "https" : "http"
        const port = origin.port === "" ? (scheme === "https" ? 443 : 80) : Number(origin.port)
        let authorization = operation.origin.authorization === undefined
          ? undefined
          : Redacted.value(operation.origin.authorization)
        const socketPath = yield* sandbox.egressSocketPath(id, "git")
        yield* EgressProxy.start({
          socketPath,
          rules: {
            network: { mode: "restricted", allowDomains: [] },
            allowPrivate: options.allowPrivate,
            serviceHosts: [origin.hostname]
          },
          resolve: options.resolve,
          inject: { host: origin.hostname, scheme, port, authorization: () => authorization }
        })
        // Runs before the proxy's own release: no request after the command gets the credential.
        yield* Effect.addFinalizer(() => Effect.sync(() => (authorization = undefined)))
        const workspace = yield* sandbox.open(id, options.limits, { network: "proxy", egressUser: "git" })
        const result = yield* sandbox.exec(workspace, {
          command: operation.command,
          // Even a loopback origin goes through the proxy (the sandbox has no other way out).
          env: { ...operation.env, GIT_TERMINAL_PROMPT: "0", NO_PROXY: "", no_proxy: "" },
          timeoutMs: operation.timeoutMs ?? options.limits.maxTimeoutMs
        })
        return {
          exitCode: result.exitCode,
          stdout: result.stdout,
          stderr: result.limit === undefined ? result.stderr : `${result.stderr}\n${result.limit.message}`
        }
      })
    ).pipe(Effect.mapError((e) => new SpillFailed({ message: e.message })))
})
