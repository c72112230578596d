/**
 * How a command fails, and its exit code (ExitCode): failures of the service
 * or of the connection exit 1, usage mistakes 2, both told on stderr in one
 * line (a failure of the service with its envelope's message, code, status
 * and request id), never as a stack trace; a run followed to its end that
 * failed exits 3, one cancelled 4 (its `[run]` line already said so).
 */
import { ClientError, type Failure, ServiceError } from "agent-service/client"
import { Data, Effect, Runtime } from "effect"
import { CliError } from "effect/cli"
import { Output } from "./Output.ts"

/** The CLI's exit codes (docs/guide/cli.md#exit-codes). */
export const ExitCode = {
  /** Done: the command did what it was asked (a run followed to its end completed, or waits on a person). */
  ok: 0,
  /** The service refused or failed, or could not be reached. */
  failure: 1,
  /** A usage mistake, including an input the contract refuses before anything is sent. */
  usage: 2,
  /** The run followed to its end failed. */
  runFailed: 3,
  /** The run followed to its end was cancelled. */
  runCancelled: 4
} as const

/** A run the command followed ended failed or cancelled. */
export class RunUnsuccessful extends Data.TaggedError("RunUnsuccessful")<{
  readonly status: "failed" | "cancelled"
}> {}

/** A mistake in how the command was called. */
export class Usage extends Data.TaggedError("Usage")<{ readonly message: string }> {}

/** A failure already told to the user: exits with `exitCode` and no runtime report. */
export class Reported extends Data.TaggedError("Reported")<{ readonly exitCode: number }> {
  override readonly [Runtime.errorReported] = false
  override readonly [Runtime.errorExitCode] = this.exitCode
}

export const describe = (failure: Failure): string =>
  failure._tag === "ServiceError"
    ? `error: ${failure.message} (${failure.code}, HTTP ${failure.status}, request ${failure.request_id})`
    : `error: ${failure.message} (${failure.kind})`

const report = (line: string | undefined, exitCode: number) =>
  Effect.andThen(
    line === undefined ? Effect.void : Effect.flatMap(Output, (out) => out.error(line)),
    Effect.fail(new Reported({ exitCode }))
  )

const isFailure = (e: unknown): e is Failure => e instanceof ServiceError || e instanceof ClientError

/**
 * Tells the user what went wrong and fails with `Reported`. The command-line
 * parser already printed its own errors (with the usage). Anything else
 * is left to the runtime's report.
 */
export const reported = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | Reported, R | Output> =>
  Effect.catch(effect, (e): Effect.Effect<never, E | Reported, Output> => {
    if (CliError.isCliError(e)) return report(undefined, ExitCode.usage)
    if (e instanceof Usage) return report(`error: ${e.message}`, ExitCode.usage)
    if (e instanceof RunUnsuccessful) {
      return report(undefined, e.status === "failed" ? ExitCode.runFailed : ExitCode.runCancelled)
    }
    if (isFailure(e)) {
      return report(
        describe(e),
        e._tag === "ClientError" && e.kind === "invalid_request" ? ExitCode.usage : ExitCode.failure
      )
    }
    return Effect.fail(e)
  })
