/**
 * One call to GitHub and how it fails. A failure keeps only GitHub's status
 * and message, never a request or its headers; and since that message is
 * GitHub's own text (an error body), every credential shape in it (tokens of
 * each kind, app JWTs, git's Basic credential) is replaced before it can reach
 * a tool result, an error, a connection's statusReason or a log (spec 4.8
 * rule 7). Octokit is given a silent logger for the same reason: its own
 * console lines repeat what GitHub sent (a request-id header, an error
 * message), unscrubbed and outside the service's JSON log.
 */
import { Data, Duration, Effect } from "effect"

/** GitHub answered an error, or could not be reached (`status` 0). */
export class GitHubFailed
  extends Data.TaggedError("GitHubFailed")<{ readonly status: number; readonly message: string }>
{}

/**
 * GitHub's credential formats: tokens (ghp_ personal, gho_ OAuth, ghu_ user-to-server, ghs_
 * installation, ghr_ refresh, github_pat_ fine-grained, the older v1.<hex>), app JWTs, and the
 * Basic credential git sends (`x-access-token:<token>` in base64).
 */
const credentialShapes =
  /\b(?:gh[pousr]_[A-Za-z0-9_]{16,}|github_pat_[A-Za-z0-9_]{22,}|v1\.[0-9a-f]{40}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}|eC1hY2Nlc3MtdG9rZW46[A-Za-z0-9+/=]+)/g

/** `text` with every credential shape (and each of `secrets`) replaced by `<redacted>`. */
export const withoutCredentials = (text: string, secrets: ReadonlyArray<string> = []): string =>
  secrets.filter((s) => s.length >= 8).reduce(
    (out, s) => out.split(s).join("<redacted>"),
    text.replace(credentialShapes, "<redacted>")
  )

const timeout = Duration.seconds(30)

const failure = (e: unknown): GitHubFailed => {
  if (typeof e === "object" && e !== null && "status" in e && typeof e.status === "number") {
    const message = "message" in e && typeof e.message === "string" ? e.message : `HTTP ${e.status}`
    return new GitHubFailed({ status: e.status, message: withoutCredentials(message.split(" - https://")[0]) })
  }
  return new GitHubFailed({
    status: 0,
    message: withoutCredentials(e instanceof Error ? e.message : "GitHub could not be reached")
  })
}

/** One call to GitHub: a promise that may reject, bounded and aborted with the fiber. */
export const call = <A>(f: (signal: AbortSignal) => Promise<A>): Effect.Effect<A, GitHubFailed> =>
  Effect.tryPromise({ try: f, catch: failure }).pipe(
    Effect.timeoutOrElse({
      duration: timeout,
      orElse: () => Effect.fail(new GitHubFailed({ status: 0, message: "GitHub did not answer within 30 seconds" }))
    })
  )

const silent = () => {}

/** Octokit's `log` option: nothing (see the header). */
export const silentLog = { debug: silent, info: silent, warn: silent, error: silent }
