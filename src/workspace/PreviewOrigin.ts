/**
 * The origin preview URLs name (src/config/PreviewConfig.ts): SVC_PREVIEW_ORIGIN
 * when set, else SVC_PUBLIC_URL's scheme and host on the previews' port. With
 * SVC_PREVIEW_PORT=0 that port is known only once the previews' listener is
 * bound (src/App.ts tells it, before the API's listener opens).
 */
import { Context, Effect, Layer, Option, Ref } from "effect"
import { defaultOrigin } from "../config/PreviewConfig.ts"
import { ServiceConfig } from "../config/ServiceConfig.ts"

export class PreviewOrigin extends Context.Service<PreviewOrigin, {
  /** `scheme://host[:port]`, no trailing slash. */
  readonly current: Effect.Effect<string>
  /** The previews' listener is bound on `port`. */
  readonly bound: (port: number) => Effect.Effect<void>
}>()("svc/PreviewOrigin") {
  static readonly layer = Layer.effect(PreviewOrigin)(
    Effect.gen(function*() {
      const { previews, publicUrl } = yield* ServiceConfig
      const port = yield* Ref.make(previews.port)
      return {
        current: Option.match(previews.origin, {
          onSome: Effect.succeed,
          onNone: () => Effect.map(Ref.get(port), (p) => defaultOrigin(publicUrl, p))
        }),
        bound: (p) => Ref.set(port, p)
      }
    })
  )
}
