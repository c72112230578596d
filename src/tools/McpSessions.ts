/**
 * Warm MCP sessions, shared by runs: one per (tool server, configVersion,
 * transport, URL, SHA-256 of the bearer token), so a run does not pay for a
 * handshake, a tools/list and a DELETE each time.
 *
 * - Runs asking at the same time wait for one connect; a failed connect is
 *   not kept (the next run tries again).
 * - A session no run holds for SVC_MCP_IDLE_MS (on the Clock) is closed
 *   (DELETE, then close); all close with the layer.
 * - A session whose transport fails or closes (server gone, session expired)
 *   is no longer handed out; a call that finds its session gone (404) is sent
 *   once more on a new session.
 * - The cached tool list is read again after notifications/tools/list_changed,
 *   when it is older than the idle window, and when the run asks (a run
 *   resuming after a park must see what the server offers now).
 * - Every request made for a run carries that run's headers (McpClient).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js"
import { Clock, Context, Deferred, Duration, Effect, Exit, Fiber, Layer, Redacted, type Scope } from "effect"
import { createHash } from "node:crypto"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { Outbound } from "../outbound/Outbound.ts"
import * as McpClient from "./McpClient.ts"

/** What a session is opened for. */
export interface SessionTarget {
  readonly serverId: string
  readonly configVersion: number
  readonly transport: "http" | "sse"
  readonly url: string
  /** The bearer token when the server has auth; the pool keys on its SHA-256 only. */
  readonly token: Redacted.Redacted | undefined
  readonly timeoutMs: number
}

export interface AcquireOptions {
  /** The run's Svc-Run-Id / Svc-Root-Run-Id: sent on every request made for this lease. */
  readonly headers: McpClient.HeaderMap
  /** Read the tool list again even when the cached one is current. */
  readonly relist: boolean
}

/** A run's hold on a session, released with the run's scope. */
export interface Lease {
  /** The server's tools as this run sees them. */
  readonly tools: ReadonlyArray<Tool>
  /** One tools/call; sent once more on a new session when the session turned out to be gone. */
  readonly call: (name: string, args: Record<string, unknown>) => Effect.Effect<CallToolResult, McpClient.McpFailure>
}

interface Session {
  readonly key: string
  readonly client: Client
  readonly timeoutMs: number
  tools: ReadonlyArray<Tool>
  listedAt: number
  /** notifications/tools/list_changed arrived since the last listing. */
  stale: boolean
  /** Leases holding it. */
  users: number
  /** When it closes if still unused. */
  expiresAt: number
  reaping: boolean
  /** Handed out to new leases (false once retired: broken, idle, or the pool closing). */
  pooled: boolean
  closed: boolean
}

interface Slot {
  readonly ready: Deferred.Deferred<Session, McpClient.McpFailure>
  session: Session | undefined
}

/** The pool key; the token appears only as its SHA-256. */
export const keyOf = (target: SessionTarget): string =>
  JSON.stringify([
    target.serverId,
    target.configVersion,
    target.transport,
    target.url,
    target.token === undefined ? null : createHash("sha256").update(Redacted.value(target.token)).digest("hex")
  ])

const make = Effect.gen(function*() {
  const outbound = yield* Outbound
  const { mcpIdleMs } = yield* ServiceConfig
  const scope = yield* Effect.scope
  const context = yield* Effect.context<never>()
  const clock = yield* Clock.Clock
  const slots = new Map<string, Slot>()
  const live = new Set<Session>()
  let open = true

  /** Connects and idle closes run in the pool's scope, not in the run that caused them. */
  const background = (effect: Effect.Effect<void>): void => {
    Fiber.runIn(Effect.runForkWith(context)(effect), scope)
  }

  const closeSession = (session: Session): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (session.closed) return Effect.void
      session.closed = true
      live.delete(session)
      return McpClient.close(session.client, session.timeoutMs)
    })

  /** No longer handed out; closed once no lease holds it. */
  const retire = (session: Session): void => {
    session.pooled = false
    if (slots.get(session.key)?.session === session) slots.delete(session.key)
    if (session.users === 0 && !session.closed) background(closeSession(session))
  }

  const reap = (session: Session): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (session.users > 0 || !session.pooled) {
        session.reaping = false
        return Effect.void
      }
      const remaining = session.expiresAt - clock.currentTimeMillisUnsafe()
      if (remaining <= 0) {
        session.reaping = false
        retire(session)
        return Effect.void
      }
      return Effect.flatMap(clock.sleep(Duration.millis(remaining)), () => reap(session))
    })

  const hold = (session: Session): void => {
    session.users += 1
  }

  const release = (session: Session): void => {
    session.users -= 1
    if (session.users > 0) return
    if (!session.pooled) return background(closeSession(session))
    session.expiresAt = clock.currentTimeMillisUnsafe() + mcpIdleMs
    if (!session.reaping) {
      session.reaping = true
      background(reap(session))
    }
  }

  const connect = (
    key: string,
    target: SessionTarget,
    headers: McpClient.HeaderMap
  ): Effect.Effect<Session, McpClient.McpFailure> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        const events: { session: Session | undefined; broken: boolean } = { session: undefined, broken: false }
        const client = yield* restore(McpClient.open(outbound.fetch, {
          transport: target.transport,
          url: target.url,
          headers: target.token === undefined ? {} : { authorization: `Bearer ${Redacted.value(target.token)}` },
          timeoutMs: target.timeoutMs
        }, {
          requestHeaders: headers,
          onToolsChanged: () => {
            if (events.session !== undefined) events.session.stale = true
          },
          onBroken: () => {
            if (events.session === undefined) events.broken = true
            else retire(events.session)
          }
        }))
        const tools = yield* restore(McpClient.listTools(client, target.timeoutMs, headers)).pipe(
          Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : McpClient.close(client, target.timeoutMs)))
        )
        const session: Session = {
          key,
          client,
          timeoutMs: target.timeoutMs,
          tools,
          listedAt: clock.currentTimeMillisUnsafe(),
          stale: false,
          users: 0,
          expiresAt: 0,
          reaping: false,
          pooled: open && !events.broken,
          closed: false
        }
        events.session = session
        live.add(session)
        return session
      })
    )

  /** The pooled session for the key, connecting (once, however many ask) when there is none. */
  const sessionFor = (target: SessionTarget, headers: McpClient.HeaderMap) =>
    Effect.suspend(() => {
      const key = keyOf(target)
      const existing = slots.get(key)
      if (existing !== undefined) {
        return Effect.map(Deferred.await(existing.ready), (session) => ({ session, fresh: false }))
      }
      const slot: Slot = { ready: Deferred.makeUnsafe(), session: undefined }
      slots.set(key, slot)
      background(
        connect(key, target, headers).pipe(
          Effect.onExit((exit) =>
            Effect.sync(() => {
              if (Exit.isSuccess(exit)) {
                slot.session = exit.value
                if (!exit.value.pooled && slots.get(key) === slot) {
                  slots.delete(key)
                }
                // Shut while connecting: close it as soon as the waiting leases let go.
                if (!open) exit.value.pooled = false
              } else if (slots.get(key) === slot) {
                slots.delete(key)
              }
              Deferred.doneUnsafe(slot.ready, exit)
            })
          ),
          // Not a silent catch-all: a failed connect reaches every waiting lease through `slot.ready`,
          // which reports it; this background fiber has nothing left to say.
          Effect.ignore
        )
      )
      return Effect.map(Deferred.await(slot.ready), (session) => ({ session, fresh: true }))
    })

  yield* Effect.addFinalizer(() =>
    Effect.suspend(() => {
      open = false
      slots.clear()
      const all = [...live]
      for (const session of all) session.pooled = false
      return Effect.forEach(all, closeSession, { concurrency: "unbounded", discard: true })
    })
  )

  return {
    /**
     * A lease on the warm session for `target` (held until the scope ends),
     * with its tool list read again if it changed, aged past the idle window,
     * or `relist` asks. A cached session that fails that listing is replaced once.
     */
    acquire: Effect.fn("McpSessions.acquire")(function*(target: SessionTarget, options: AcquireOptions) {
      const held: { session: Session | undefined } = { session: undefined }
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          if (held.session !== undefined) release(held.session)
          held.session = undefined
        })
      )
      /** Moves the lease to `next` (holding it before letting go of the previous one). */
      const switchTo = (next: Session) => {
        const previous = held.session
        hold(next)
        held.session = next
        if (previous !== undefined) release(previous)
      }
      let tools: ReadonlyArray<Tool> = []
      for (let attempt = 0; attempt < 2; attempt++) {
        const { session, fresh } = yield* sessionFor(target, options.headers)
        // Broken and closed before this lease could take it (its transport failed right after the handshake).
        if (session.closed) {
          if (attempt === 1) {
            return yield* new McpClient.McpFailure({
              message: `MCP session with ${target.url} closed`,
              sessionGone: true
            })
          }
          continue
        }
        switchTo(session)
        const aged = clock.currentTimeMillisUnsafe() - session.listedAt >= mcpIdleMs
        if (fresh || !(options.relist || session.stale || aged)) {
          tools = session.tools
          break
        }
        session.stale = false
        const listed = yield* Effect.result(McpClient.listTools(session.client, target.timeoutMs, options.headers))
        if (listed._tag === "Success") {
          session.tools = listed.success
          session.listedAt = clock.currentTimeMillisUnsafe()
          tools = listed.success
          break
        }
        // The cached session is broken: the next attempt connects afresh.
        retire(session)
        if (attempt === 1) return yield* listed.failure
      }
      const lease: Lease = {
        tools,
        call: (name, args) =>
          Effect.gen(function*() {
            const session = held.session
            if (session === undefined) {
              return yield* new McpClient.McpFailure({ message: "the MCP session was released", sessionGone: false })
            }
            const first = yield* Effect.result(
              McpClient.callTool(session.client, name, args, target.timeoutMs, options.headers)
            )
            if (first._tag === "Success") {
              return first.success
            }
            if (!first.failure.sessionGone) return yield* first.failure
            // Nothing ran on a session the server no longer has: send the call once more on a new one.
            retire(session)
            const next = yield* sessionFor(target, options.headers)
            switchTo(next.session)
            return yield* McpClient.callTool(next.session.client, name, args, target.timeoutMs, options.headers)
          })
      }
      return lease
    })
  }
})

export class McpSessions extends Context.Service<McpSessions, {
  readonly acquire: (
    target: SessionTarget,
    options: AcquireOptions
  ) => Effect.Effect<Lease, McpClient.McpFailure, Scope.Scope>
}>()("svc/McpSessions") {
  static readonly layer = Layer.effect(McpSessions)(make)
}
