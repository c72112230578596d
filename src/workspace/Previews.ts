/**
 * Preview URLs of managed workspaces (spec 2.1.3 `previews`, 2.2
 * `workspace.previews`). With `previews.enabled`, a thread whose workspace is
 * active shows `{ port, url, expiresAt }` for each listed port (without
 * `ports`, for the port of each declared service), computed when the thread
 * is read (never stored). `url` is `<preview origin>/v1/previews/<token>/`
 * (PreviewOrigin; never the API's origin, so a previewed page cannot reach
 * what the console keeps there): the token names the thread, the port and
 * the expiry, signed with a key derived from the master key
 * (SecretBox.sign, purpose `preview`); the signature is the grant, no API key
 * is needed. A URL expires at the end of the clock hour after the current one
 * (valid one to two hours), so every read within an hour shows the same URL.
 */
import { Clock, Context, Effect, Layer, Option } from "effect"
import { ThreadId } from "../../domain/Ids.ts"
import type { Thread } from "../../domain/Thread.ts"
import { SecretBox } from "../secrets/SecretBox.ts"
import type { ThreadRow } from "../store/ThreadRepo.ts"
import { PreviewOrigin } from "./PreviewOrigin.ts"

const hourMs = 60 * 60 * 1000

/** The ports a workspace previews: those listed, or when none are, the ports of its declared services. */
export const previewPorts = (
  spec: {
    readonly previews?: { readonly ports?: ReadonlyArray<number> }
    readonly services?: ReadonlyArray<{ readonly port?: number }>
  }
): ReadonlyArray<number> => {
  const listed = spec.previews?.ports ?? []
  return listed.length > 0 ? listed : (spec.services ?? []).flatMap((s) => (s.port === undefined ? [] : [s.port]))
}
const purpose = "preview"
const tokenShape = /^(thread_[0-9A-Za-z]{1,64})\.([1-9][0-9]{0,4})\.([0-9]{1,12})\.([A-Za-z0-9_-]{43})$/

export interface Grant {
  readonly threadId: ThreadId
  readonly port: number
}

export class Previews extends Context.Service<Previews, {
  /** The thread as the API shows it: `workspace.previews` set when its spec enables previews and the workspace is active. */
  readonly present: (row: ThreadRow) => Effect.Effect<Thread>
  /** What a token grants, when its signature holds and it has not expired; none otherwise. */
  readonly grant: (token: string) => Effect.Effect<Option.Option<Grant>>
}>()("svc/Previews") {
  static readonly layer = Layer.effect(Previews)(
    Effect.gen(function*() {
      const box = yield* SecretBox
      const origin = yield* PreviewOrigin

      const present = (row: ThreadRow) =>
        Effect.gen(function*() {
          const { thread, workspaceSpec } = row
          if (thread.workspace === null || workspaceSpec === null || workspaceSpec.previews?.enabled !== true) {
            return thread
          }
          const ports = thread.workspace.status === "active" ? previewPorts(workspaceSpec) : []
          const now = yield* Clock.currentTimeMillis
          const expires = (Math.floor(now / hourMs) + 2) * hourMs
          const expiresAt = new Date(expires).toISOString()
          const base = yield* origin.current
          return {
            ...thread,
            workspace: {
              ...thread.workspace,
              previews: ports.map((port) => {
                const message = `${thread.id}.${port}.${expires / 1000}`
                return {
                  port,
                  url: `${base}/v1/previews/${message}.${box.sign(purpose, message)}/`,
                  expiresAt
                }
              })
            }
          }
        })

      const grant = (token: string) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          const match = tokenShape.exec(token)
          if (match === null) return Option.none()
          const [, threadId, port, expires, signature] = match
          if (Number(expires) * 1000 <= now) return Option.none()
          return box.verify(purpose, `${threadId}.${port}.${expires}`, signature)
            ? Option.some({ threadId: ThreadId.make(threadId), port: Number(port) })
            : Option.none()
        })

      return { present, grant }
    })
    // The one PreviewOrigin of the application (layers are shared within a build): the previews' listener tells it its port.
  ).pipe(Layer.provide(PreviewOrigin.layer))
}
