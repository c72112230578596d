/**
 * The CLI run inside the test's process through `runCli` (src/cli/Main.ts),
 * the entry the bin (`node src/cli.ts`) runs too: the same commands, exit
 * codes and bytes on stdout and stderr (streams that are not a terminal, as
 * a spawned process's pipes), without the seconds a new Node process and
 * its module loading cost per command. The environment is the test
 * process's with `env` over it, as a spawned process would inherit it.
 * docs/design/testing.md says which CLI tests still spawn the bin.
 */
import { Effect, Fiber, Scope } from "effect"
import { Readable, Writable } from "node:stream"
import { runCli } from "../../src/cli/Main.ts"

export interface CliResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** A stream that keeps what is written to it and tells `onWrite` each time. */
const capture = (onWrite: () => void) => {
  let text = ""
  const sink = new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, callback) {
      text += chunk.toString()
      onWrite()
      callback()
    }
  })
  return { sink, text: () => text }
}

const start = (args: ReadonlyArray<string>, env: Record<string, string>, stdin: string | undefined) => {
  const listeners = new Set<() => void>()
  const notify = () => listeners.forEach((listener) => listener())
  const stdout = capture(notify)
  const stderr = capture(notify)
  const run = runCli({
    args,
    env: { ...process.env, ...env },
    stdin: Readable.from(stdin === undefined ? [] : [stdin]),
    stdout: stdout.sink,
    stderr: stderr.sink
  }).pipe(Effect.map((code): CliResult => ({ code, stdout: stdout.text(), stderr: stderr.text() })))
  return { run, stdout: stdout.text, output: () => stdout.text() + stderr.text(), listeners }
}

/** `agent-service ...args` with `env` over the test's environment and `stdin` on standard input. */
export const cli = (args: ReadonlyArray<string>, env: Record<string, string>, stdin?: string) =>
  start(args, env, stdin).run

/** A CLI command running in the background (a `runs tail` that waits on a park). */
export interface LaunchedCli {
  /** stdout alone. */
  readonly stdout: () => string
  /** Waits until stdout and stderr so far satisfy `done`; fails if the command ends first. */
  readonly waitForOutput: (done: (output: string) => boolean) => Effect.Effect<void, Error>
  /** The command's end. */
  readonly finished: Effect.Effect<CliResult>
}

/** Starts `agent-service ...args` in the background; closing the scope interrupts it. */
export const launchCli = (
  args: ReadonlyArray<string>,
  env: Record<string, string>
): Effect.Effect<LaunchedCli, never, Scope.Scope> =>
  Effect.gen(function*() {
    const started = start(args, env, undefined)
    const fiber = yield* Effect.forkScoped(started.run)
    const seen = (done: (output: string) => boolean) =>
      Effect.callback<void>((resume) => {
        const check = () => {
          if (!done(started.output())) return
          started.listeners.delete(check)
          resume(Effect.void)
        }
        started.listeners.add(check)
        check()
        return Effect.sync(() => started.listeners.delete(check))
      })
    const ended = Effect.flatMap(
      Fiber.await(fiber),
      () => Effect.fail(new Error(`the command ended while waiting on its output:\n${started.output()}`))
    )
    return {
      stdout: started.stdout,
      waitForOutput: (done) => Effect.raceFirst(seen(done), ended),
      finished: Fiber.join(fiber)
    }
  })
