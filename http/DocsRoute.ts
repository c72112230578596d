/**
 * `GET /docs`: the API's reference page, rendered in the browser by Scalar
 * from the OpenAPI document (the same one `GET /v1/openapi.json` serves,
 * inlined in the page). Everything it needs comes from this service: the
 * renderer's script (the bundle Effect ships for `HttpApiScalar`) at
 * `GET /docs/scalar.js`, no web fonts (system fonts instead of Scalar's,
 * which it would fetch from fonts.scalar.com), and a Content-Security-Policy
 * that allows this origin only. Both answers are compressed (br or gzip, as
 * the client accepts) once and kept in memory: the page on its first request,
 * the script while that page is read; the page paints its title at once and
 * the reference when the script has run.
 */
import { Effect, Schema } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { OpenApi } from "effect/http-api"
import { createHash } from "node:crypto"
import { promisify } from "node:util"
import { brotliCompress, constants, gzip } from "node:zlib"
import { Api } from "./Api.ts"

export const path = "/docs"
export const scriptPath = "/docs/scalar.js"

/** The route templates, for the router middleware's route table. */
export const routes: ReadonlyArray<readonly [string, string]> = [["GET", path], ["GET", scriptPath]]

/** Inline code is the page's own (its start-up script, Scalar's injected styles); nothing from elsewhere. */
export const contentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-inline'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join("; ")

const ScalarBundle = Schema.Struct({ javascript: Schema.String })

/** Scalar's standalone bundle, as Effect's `HttpApiScalar` inlines it (a module its exports do not list). */
const loadScript = Effect.promise(() =>
  import(new URL("./internal/httpApiScalar.js", import.meta.resolve("effect/http-api")).href)
)
  .pipe(Effect.flatMap(Schema.decodeUnknownEffect(ScalarBundle)), Effect.orDie, Effect.map((m) => m.javascript))

/** Scalar's own font families replaced by the system's. */
const systemFonts = `:root {
  --scalar-font: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  --scalar-font-code: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
}`

/** JSON placed inside a <script> element: no `<` can close it. */
const scriptJson = (value: unknown) => JSON.stringify(value).replaceAll("<", "\\u003c")

const escapeHtml = (text: string) =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll("\"", "&quot;")

const page = (scriptVersion: string) => {
  const spec = OpenApi.fromApi(Api)
  const config = { _integration: "html", withDefaultFonts: false, customCss: systemFonts }
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${escapeHtml(spec.info.title)}</title>
    <style>body { margin: 0; font-family: system-ui, sans-serif; } #loading { padding: 2rem; }</style>
    <script src="${scriptPath}?v=${scriptVersion}" defer></script>
  </head>
  <body>
    <div id="api-reference-container"><p id="loading">${escapeHtml(spec.info.title)}: loading the reference…</p></div>
    <script type="application/json" id="openapi">${scriptJson(spec)}</script>
    <script type="application/json" id="scalar-config">${scriptJson(config)}</script>
    <script>
      document.addEventListener("DOMContentLoaded", () => {
        const read = (id) => JSON.parse(document.getElementById(id).textContent)
        window.Scalar.createApiReference(document.getElementById("api-reference-container"), {
          ...read("scalar-config"),
          content: read("openapi")
        })
      })
    </script>
  </body>
</html>`
}

interface Encoded {
  readonly identity: Uint8Array
  readonly gzip: Uint8Array
  readonly br: Uint8Array
}

const compress = (body: Uint8Array): Effect.Effect<Encoded> =>
  Effect.promise(async () => {
    const [gz, br] = await Promise.all([
      promisify(gzip)(body, { level: 6 }),
      // Quality 5: as small as gzip's best at a fraction of brotli's time at 11 (seconds for the bundle).
      promisify(brotliCompress)(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } })
    ])
    return { identity: body, gzip: gz, br }
  })

/** The encoding to answer with: br, then gzip, when the client accepts it (`;q=0` refuses). */
export const chooseEncoding = (acceptEncoding: string | undefined): "br" | "gzip" | "identity" => {
  const accepted = new Set(
    (acceptEncoding ?? "").split(",").map((part) => part.trim().toLowerCase()).filter((part) =>
      !/;\s*q=0(\.0*)?\s*$/.test(part)
    ).map((part) => part.split(";")[0].trim())
  )
  return accepted.has("br") ? "br" : accepted.has("gzip") ? "gzip" : "identity"
}

const answer = (encoded: Encoded, contentType: string, cacheControl: string) =>
  Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
    const encoding = chooseEncoding(request.headers["accept-encoding"])
    return HttpServerResponse.uint8Array(encoded[encoding], {
      contentType,
      headers: {
        ...(encoding === "identity" ? {} : { "content-encoding": encoding }),
        vary: "accept-encoding",
        "cache-control": cacheControl,
        "content-security-policy": contentSecurityPolicy,
        "x-content-type-options": "nosniff"
      }
    })
  })

const encoder = new TextEncoder()

export const layer = HttpRouter.use(Effect.fnUntraced(function*(router) {
  // Built on the first request, then kept: most processes never serve the page.
  const script = yield* Effect.cached(Effect.map(loadScript, (text) => {
    const bytes = encoder.encode(text)
    return { bytes, version: createHash("sha256").update(bytes).digest("hex").slice(0, 16) }
  }))
  const js = yield* Effect.cached(Effect.flatMap(script, ({ bytes }) => compress(bytes)))
  const html = yield* Effect.cached(Effect.flatMap(script, ({ version }) => compress(encoder.encode(page(version)))))
  yield* router.add(
    "GET",
    path,
    Effect.flatMap(html, (encoded) =>
      // The script is compressed while the browser reads the page, before it asks for the script.
      Effect.andThen(Effect.forkDetach(js), answer(encoded, "text/html; charset=utf-8", "no-cache")))
  )
  yield* router.add(
    "GET",
    scriptPath,
    // The page names the script with its content's hash: a new version is a new URL.
    Effect.flatMap(
      js,
      (encoded) => answer(encoded, "text/javascript; charset=utf-8", "public, max-age=31536000, immutable")
    )
  )
}))
