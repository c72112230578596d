/**
 * A client following one run's stream as an application would: it reads SSE
 * frames, and on any disconnect (its node killed, the stream cut, a parked
 * turn's end) it reconnects with `Last-Event-ID` through a node that is up,
 * until the run's final end. It keeps every frame with the time it arrived,
 * so the stream can be checked whole and the failover timed.
 */
import { Deferred, Effect } from "effect"
import { frames } from "../../test/support/UiStream.ts"
import { apiKey } from "./Cluster.ts"

export interface Received {
  readonly id: number
  readonly data: string
  /** Epoch ms of arrival. */
  readonly at: number
}

export interface Followed {
  readonly runId: string
  readonly frames: ReadonlyArray<Received>
  /** How many connections it took. */
  readonly connections: number
  /** Whether the final end (a terminal finish or an abort) arrived. */
  readonly ended: boolean
}

export interface Follower {
  readonly received: () => ReadonlyArray<Received>
  /** Resolves with each frame the moment it arrives (the load reacts to approval requests). */
  readonly onFrame: (listener: (frame: Received) => void) => void
  readonly done: Effect.Effect<Followed>
}

const isFinal = (data: string): boolean => {
  if (data.startsWith("{\"type\":\"abort\"")) return true
  return data.startsWith("{\"type\":\"finish\"") && !data.includes("\"finishReason\":\"other\"")
}

/** One connection: frames until the response ends or fails. */
const connect = (base: string, runId: string, after: number, onFrame: (f: Received) => void) =>
  Effect.tryPromise({
    try: async (signal) => {
      const response = await fetch(`${base}/v1/runs/${runId}/stream`, {
        signal,
        headers: {
          authorization: `Bearer ${apiKey}`,
          accept: "text/event-stream",
          ...(after > 0 ? { "last-event-id": String(after) } : {})
        }
      })
      if (response.status !== 200 || response.body === null) {
        await response.text().catch(() => "")
        return
      }
      const decoder = new TextDecoder()
      let buffer = ""
      for await (const bytes of response.body) {
        buffer += decoder.decode(bytes, { stream: true })
        const end = buffer.lastIndexOf("\n\n")
        if (end < 0) continue
        const complete = buffer.slice(0, end + 2)
        buffer = buffer.slice(end + 2)
        for (const f of frames(complete)) if (f.id !== undefined) onFrame({ id: f.id, data: f.data, at: Date.now() })
      }
    },
    catch: (e) => (e instanceof Error ? e : new Error(String(e)))
  })

/** Follows `runId` from its start through whichever nodes `live()` offers; `prefer` is tried first. */
export const follow = (
  runId: string,
  live: () => ReadonlyArray<string>,
  prefer: string,
  deadline: number
): Effect.Effect<Follower> =>
  Effect.gen(function*() {
    const received: Array<Received> = []
    const listeners: Array<(frame: Received) => void> = []
    const finished = yield* Deferred.make<Followed>()
    let connections = 0
    let ended = false
    const onFrame = (f: Received) => {
      received.push(f)
      if (isFinal(f.data)) ended = true
      for (const l of listeners) l(f)
    }
    const loop = Effect.gen(function*() {
      let base = prefer
      while (!ended && Date.now() < deadline) {
        connections += 1
        const after = received.at(-1)?.id ?? 0
        yield* Effect.ignore(
          connect(base, runId, after, onFrame).pipe(Effect.timeout(Math.max(1, deadline - Date.now())))
        )
        if (ended) break
        // Disconnected: another node that is up (the same one may be fine: a parked turn's end).
        const nodes = live()
        base = nodes[Math.floor(Math.random() * nodes.length)] ?? prefer
        if ((received.at(-1)?.id ?? 0) === after) yield* Effect.sleep("100 millis")
      }
      yield* Deferred.succeed(finished, { runId, frames: received, connections, ended })
    })
    yield* Effect.forkDetach(loop)
    return {
      received: () => received,
      onFrame: (l) => void listeners.push(l),
      done: Deferred.await(finished)
    } satisfies Follower
  })
