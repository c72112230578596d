/**
 * Where previews of managed workspaces are served (src/workspace/Previews.ts):
 * a listener of their own (SVC_PREVIEW_PORT) and the origin their URLs name
 * (SVC_PREVIEW_ORIGIN), never the API's. A previewed page is code a workspace
 * wrote; on the API's origin it would share the console's storage (the key the
 * console keeps) and could script the console's windows.
 */
import { Config, Effect, Option } from "effect"
import { ConfigurationError } from "./ConfigurationError.ts"
import { parseOrigin } from "./Origins.ts"

export interface PreviewConfig {
  /**
   * SVC_PREVIEW_PORT: the previews' listener, on HOST. Default PORT + 1; 0 is
   * any free port (the default origin then names the port bound).
   */
  readonly port: number
  /**
   * SVC_PREVIEW_ORIGIN: the origin preview URLs name (`https://previews.example.com`),
   * where a proxy forwards to the previews' listener; none: the default origin
   * (`defaultOrigin`).
   */
  readonly origin: Option.Option<string>
}

/** Without SVC_PREVIEW_ORIGIN: SVC_PUBLIC_URL's scheme and host, on the previews' port. */
export const defaultOrigin = (publicUrl: string, port: number): string => {
  const url = new URL(publicUrl)
  return new URL(`${url.protocol}//${url.hostname}:${port}`).origin
}

export const readPreviewConfig = (
  apiPort: number,
  publicUrl: string
): Effect.Effect<PreviewConfig, ConfigurationError | Config.ConfigError> =>
  Effect.gen(function*() {
    const publicOrigin = URL.canParse(publicUrl) ? parseOrigin(new URL(publicUrl).origin) : undefined
    if (publicOrigin === undefined) {
      return yield* new ConfigurationError({ message: `SVC_PUBLIC_URL must be an http(s) URL, got '${publicUrl}'` })
    }
    const raw = yield* Config.Int("SVC_PREVIEW_PORT").pipe(Config.option)
    if (Option.isNone(raw) && apiPort === 65535) {
      return yield* new ConfigurationError({
        message: "SVC_PREVIEW_PORT: PORT is 65535, so its default (PORT + 1) is no port: set SVC_PREVIEW_PORT"
      })
    }
    const port = Option.getOrElse(raw, () => (apiPort === 0 ? 0 : apiPort + 1))
    if (port < 0 || port > 65535) {
      return yield* new ConfigurationError({ message: `SVC_PREVIEW_PORT must be 0 to 65535, got ${port}` })
    }
    if (port !== 0 && port === apiPort) {
      return yield* new ConfigurationError({
        message: `SVC_PREVIEW_PORT must differ from PORT (${apiPort}): previews are served on an origin of their own`
      })
    }
    const rawOrigin = yield* Config.String("SVC_PREVIEW_ORIGIN").pipe(Config.option)
    const origin = Option.isSome(rawOrigin) ? parseOrigin(rawOrigin.value.trim()) : undefined
    if (Option.isSome(rawOrigin) && origin === undefined) {
      return yield* new ConfigurationError({
        message: `SVC_PREVIEW_ORIGIN: expected an http(s)://host[:port] origin, got '${rawOrigin.value}'`
      })
    }
    const named = origin ?? (port === 0 ? undefined : defaultOrigin(publicUrl, port))
    if (named !== undefined && named === publicOrigin) {
      const setting = origin === undefined ? "SVC_PREVIEW_PORT" : "SVC_PREVIEW_ORIGIN"
      return yield* new ConfigurationError({
        message:
          `${setting}: previews would be served on SVC_PUBLIC_URL's origin (${named}); give them an origin of their own`
      })
    }
    return { port, origin: Option.fromUndefinedOr(origin) }
  })
