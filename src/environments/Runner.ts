/**
 * The runner of an environment (issue 31): `agent-service environment run
 * --url <base> --token <token> --root <dir>` (src/cli/EnvironmentCommand.ts).
 * It dials out to the service and never listens: a long poll
 * (`POST /v1/environments/connect`, also its heartbeat) hands it the calls
 * of its environment, each run at once, concurrently, by the workspace tools
 * of src/workspace/WorkspaceTools.ts on RunnerSandbox (the same names, inputs
 * and outputs as a managed workspace), its result POSTed back. A failed poll
 * is retried with exponential backoff (0.5 s doubling to 30 s, jittered); a
 * token the service refuses (401: rotated or deleted) ends the runner with
 * exit code 1. The URL must be https (TLS verified by Node against the
 * system's CAs; NODE_TLS_REJECT_UNAUTHORIZED=0 is refused), or http to a
 * loopback address only. The token is never printed.
 */
import { Data, Duration, Effect, Option, Redacted, Schedule, Schema } from "effect"
import { randomBytes } from "node:crypto"
import { realpathSync, statSync } from "node:fs"
import { hostname } from "node:os"
import * as ToolOutcome from "../tools/ToolOutcome.ts"
import { limitsOf } from "../workspace/ResourceClass.ts"
import * as WorkspaceTools from "../workspace/WorkspaceTools.ts"
import * as RunnerSandbox from "./RunnerSandbox.ts"

export interface RunnerOptions {
  readonly url: string
  readonly token: Redacted.Redacted
  readonly root: string
  readonly version: string
  /** Where progress lines go (stderr). */
  readonly say: (line: string) => Effect.Effect<void>
}

/** Why the runner cannot run (exit code 1): a refused URL, root or token. */
export class RunnerRefused extends Data.TaggedError("RunnerRefused")<{ readonly message: string }> {}

/** A poll that did not come back with an answer (network, 5xx): retried. */
class PollFailed extends Data.TaggedError("PollFailed")<{ readonly message: string }> {}

const loopbackHosts = new Set(["localhost", "127.0.0.1", "[::1]", "::1"])

/** https, or http to loopback; a base URL without query or fragment. */
export const checkUrl = (raw: string, env: Readonly<Record<string, string | undefined>>) => {
  const url = URL.canParse(raw) ? new URL(raw) : undefined
  if (url === undefined) return Effect.fail(new RunnerRefused({ message: `--url: '${raw}' is not a URL` }))
  if (url.protocol === "http:" && !(loopbackHosts.has(url.hostname) || /^127\.\d+\.\d+\.\d+$/.test(url.hostname))) {
    return Effect.fail(
      new RunnerRefused({ message: "--url: plain http:// is allowed to a loopback address only; use https://" })
    )
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return Effect.fail(new RunnerRefused({ message: "--url: must be https:// (or http:// to a loopback address)" }))
  }
  if (env["NODE_TLS_REJECT_UNAUTHORIZED"] === "0") {
    return Effect.fail(
      new RunnerRefused({
        message: "NODE_TLS_REJECT_UNAUTHORIZED=0: the runner refuses a service whose TLS it cannot verify"
      })
    )
  }
  return Effect.succeed(url.origin + url.pathname.replace(/\/+$/, ""))
}

const Call = Schema.Struct({ id: Schema.String, tool: Schema.String, input: Schema.Unknown })
const PollAnswer = Schema.Struct({ call: Schema.NullOr(Call) })
const decodePoll = Schema.decodeUnknownOption(Schema.fromJsonString(PollAnswer))

export const run = (options: RunnerOptions) =>
  Effect.gen(function*() {
    const base = yield* checkUrl(options.url, process.env)
    const root = yield* Effect.try({
      try: () => realpathSync(options.root),
      catch: () => new RunnerRefused({ message: `--root: '${options.root}' does not exist` })
    })
    if (!statSync(root).isDirectory()) {
      return yield* new RunnerRefused({ message: `--root: '${options.root}' is not a directory` })
    }
    const sandbox = RunnerSandbox.make(root, process.env)
    const tools = WorkspaceTools.make({
      sandbox,
      workspace: { id: "remote", dir: root, uid: undefined, limits: limitsOf.standard, egress: undefined },
      shell: true,
      env: {},
      secrets: []
    })
    const hello = { runnerId: randomBytes(12).toString("hex"), hostName: hostname(), version: options.version }
    const headers = {
      authorization: `Bearer ${Redacted.value(options.token)}`,
      "content-type": "application/json"
    }
    const post = (path: string, body: unknown) =>
      Effect.tryPromise({
        try: (signal) => fetch(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(body), signal }),
        // The cause names what failed (ECONNREFUSED, or a certificate Node could not verify: the runner goes no further).
        catch: (e) => new PollFailed({ message: describeFailure(e) })
      }).pipe(
        Effect.flatMap((response) =>
          Effect.map(Effect.promise(() => response.text()), (text) => ({ status: response.status, text }))
        )
      )

    const execute = (call: typeof Call.Type) =>
      Effect.gen(function*() {
        const outcome = tools.call(call.tool, call.input, { id: call.id, step: 0 }) ??
          Effect.succeed(ToolOutcome.failure("unknown_tool", `This environment has no tool '${call.tool}'.`))
        const result = yield* outcome
        const body = { runnerId: hello.runnerId, output: result.output, text: result.text, isError: result.isError }
        // The answer is retried until the service takes it (or says the call is no longer this runner's).
        yield* post(`/v1/environments/calls/${encodeURIComponent(call.id)}/result`, body).pipe(
          Effect.flatMap((r) =>
            r.status < 500 ? Effect.void : Effect.fail(new PollFailed({ message: `HTTP ${r.status}` }))
          ),
          Effect.retry({ schedule: backoff, times: 10 }),
          Effect.catch((e) => options.say(`could not answer call ${call.id}: ${e.message}`))
        )
      })

    let connected = false
    const pollOnce = Effect.gen(function*() {
      const reply = yield* post("/v1/environments/connect", hello)
      if (reply.status === 401) {
        return yield* new RunnerRefused({
          message: "the service refused the environment token (rotated, deleted or mistyped)"
        })
      }
      const answer = reply.status === 200 ? decodePoll(reply.text) : Option.none()
      if (Option.isNone(answer)) {
        return yield* new PollFailed({ message: `HTTP ${reply.status}: ${reply.text.slice(0, 200)}` })
      }
      if (!connected) {
        connected = true
        yield* options.say(`connected to ${base} as ${hello.hostName}, serving ${root}`)
      }
      if (answer.value.call !== null) yield* Effect.forkDetach(execute(answer.value.call))
    })
    const resilient = pollOnce.pipe(
      Effect.tapError((e) =>
        e._tag === "PollFailed"
          ? Effect.andThen(
            Effect.sync(() => (connected = false)),
            options.say(`connection to ${base} lost (${e.message}); retrying`)
          )
          : Effect.void
      ),
      Effect.retry({ schedule: backoff, while: (e) => e._tag === "PollFailed" })
    )
    return yield* Effect.forever(resilient)
  })

/** `fetch failed (SELF_SIGNED_CERT_IN_CHAIN)`: the error and its cause's code or message. */
const describeFailure = (e: unknown): string => {
  if (!(e instanceof Error)) return String(e)
  const cause: unknown = e.cause
  const detail = cause instanceof Error
    ? ("code" in cause && typeof cause.code === "string" ? cause.code : cause.message)
    : undefined
  return detail === undefined ? e.message : `${e.message} (${detail})`
}

/** 0.5 s doubling to 30 s, jittered. */
const backoff = Schedule.exponential("500 millis").pipe(
  Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.seconds(30)))),
  Schedule.jittered
)
