/**
 * The hard deadline of a stopping process. SIGTERM / SIGINT start the
 * graceful stop (src/main.ts, http/Listener.ts): connections get
 * SVC_SHUTDOWN_GRACE_MS, then the runner, the storage and the telemetry stop.
 * Each of those can wait on something that never answers (a database that
 * stopped answering mid-query, a start-up step that never returns, a
 * finalizer that does not heed interruption), and a process that ignores its
 * SIGTERM is what a supervisor then has to SIGKILL. So the signal also arms a
 * timer, outside the Effect runtime (which may be what is stuck) and unref'd
 * (it never keeps an exiting process alive): at SVC_SHUTDOWN_GRACE_MS +
 * MarginMs it logs what was still pending and exits with ForcedExitCode.
 *
 * What was pending: the stage of the service's life the process was in (the
 * `stage` layers of src/App.ts mark them) and the kinds of handle still open
 * (sockets, timers, child processes: `process.getActiveResourcesInfo()`).
 */
import { Effect, Layer } from "effect"

/** After the grace period, how long the runner, the storage and the telemetry (3 s at most) may take to stop. */
export const MarginMs = 5_000

/** The exit code of a stop cut short by the deadline (a graceful stop exits 0). */
export const ForcedExitCode = 1

let current = "starting: configuration, telemetry and storage"

/**
 * Marks a stage boundary in a layer stack: built once the layers below are
 * ready (`starting`: what is built next), released once the layers above have
 * stopped (`stopping`: what stops next).
 */
export const stage = (starting: string, stopping: string): Layer.Layer<never> =>
  Layer.effectDiscard(
    Effect.acquireRelease(
      Effect.sync(() => {
        current = starting
      }),
      () =>
        Effect.sync(() => {
          current = stopping
        })
    )
  )

/** The kinds of handle still open, counted: `TCPSocketWrap x3, Timeout x2`. */
const openHandles = (): string => {
  const counts = new Map<string, number>()
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1)
  return [...counts].map(([kind, n]) => (n === 1 ? kind : `${kind} x${n}`)).join(", ") || "none"
}

/** The line logged when the deadline passes. */
export const pendingLine = (deadlineMs: number, signal: string): string =>
  `shutdown did not finish within ${deadlineMs} ms of ${signal}; exiting ${ForcedExitCode}. ` +
  `Still pending: ${current}; open handles: ${openHandles()}`

/**
 * Arms the deadline on the first SIGTERM or SIGINT; the line is logged with
 * the loggers of the context `arm` runs in.
 */
export const arm = (graceMs: number): Effect.Effect<void> =>
  Effect.flatMap(Effect.context<never>(), (context) =>
    Effect.sync(() => {
      const deadlineMs = graceMs + MarginMs
      const onSignal = (signal: NodeJS.Signals) => {
        process.off("SIGTERM", onSignal)
        process.off("SIGINT", onSignal)
        setTimeout(() => {
          Effect.runSyncWith(context)(Effect.logError(pendingLine(deadlineMs, signal)))
          process.exit(ForcedExitCode)
        }, deadlineMs).unref()
      }
      process.on("SIGTERM", onSignal)
      process.on("SIGINT", onSignal)
    }))
