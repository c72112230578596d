/**
 * Where the CLI writes: results and a run's answer on stdout, failures and
 * progress on stderr. Progress is a spinner line on a terminal (erased before
 * anything else is written) and a plain `... <label>` line when stderr is a
 * pipe or a file, once per label. Streamed text may leave stdout mid-line;
 * the next full line starts on a line of its own.
 */
import { Context, Duration, Effect, Layer, Schedule } from "effect"

export interface OutputShape {
  /** Raw text on stdout (streamed answer text). */
  readonly write: (text: string) => Effect.Effect<void>
  /** A whole line on stdout. */
  readonly line: (text: string) => Effect.Effect<void>
  /** Ends a line left open by `write`, if any. */
  readonly endLine: Effect.Effect<void>
  /** A whole line on stderr. */
  readonly error: (text: string) => Effect.Effect<void>
  /** What the command is waiting for; `undefined` hides it. */
  readonly progress: (label: string | undefined) => Effect.Effect<void>
}

const frames = ["|", "/", "-", "\\"]
const erase = "\r\x1b[K"

/** A stream the CLI writes to: the process's stdout or stderr, or a test's. */
export type Sink = NodeJS.WritableStream & { readonly isTTY?: boolean }

const make = (stdout: Sink, stderr: Sink) =>
  Effect.gen(function*() {
    const tty = stderr.isTTY === true
    let atLineStart = true
    let label: string | undefined
    let shown = false
    let frame = 0

    const hide = () => {
      if (shown) stderr.write(erase)
      shown = false
    }
    const endPartialLine = () => {
      if (!atLineStart) stdout.write("\n")
      atLineStart = true
    }
    const write = (text: string) => {
      if (text === "") return
      hide()
      stdout.write(text)
      atLineStart = text.endsWith("\n")
    }

    if (tty) {
      const spin = Effect.sync(() => {
        if (label === undefined || !atLineStart) return
        stderr.write(`${erase}${frames[frame++ % frames.length]} ${label}`)
        shown = true
      })
      yield* Effect.forkScoped(Effect.repeat(spin, Schedule.spaced(Duration.millis(100))))
      yield* Effect.addFinalizer(() => Effect.sync(hide))
    }

    return {
      write: (text) => Effect.sync(() => write(text)),
      line: (text) =>
        Effect.sync(() => {
          endPartialLine()
          write(`${text}\n`)
        }),
      endLine: Effect.sync(endPartialLine),
      error: (text) =>
        Effect.sync(() => {
          hide()
          endPartialLine()
          stderr.write(`${text}\n`)
        }),
      progress: (next) =>
        Effect.sync(() => {
          if (next === label) return
          label = next
          if (next === undefined) return hide()
          endPartialLine()
          if (!tty) stderr.write(`... ${next}\n`)
        })
    } satisfies OutputShape
  })

export class Output extends Context.Service<Output, OutputShape>()("svc/cli/Output") {
  static readonly layer = (stdout: Sink, stderr: Sink) => Layer.effect(Output)(make(stdout, stderr))
}
