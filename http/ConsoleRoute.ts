/**
 * `GET /console`: the browser console (the files of `console/` and its
 * `views/` folder: one HTML page, a stylesheet and plain ES modules, no build
 * step). The files are read once,
 * when the service starts, and served from memory; a request names a file of
 * that folder by its exact name, so no request path ever reaches the file
 * system. No API key is needed for the files: the page asks for one and sends
 * it with every API call. Every answer carries a strict Content-Security-Policy
 * (scripts and styles from this origin only, no inline code, Trusted Types for
 * DOM sinks, no framing); an unknown file is 404 `route_not_found`, in the
 * envelope.
 */
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { readdirSync, readFileSync } from "node:fs"
import { extname } from "node:path"
import { fileURLToPath } from "node:url"
import { CurrentRequestId, rawEnvelope } from "./ErrorEnvelope.ts"

export const path = "/console"

/** The route templates, for the router middleware's route table. */
export const routes: ReadonlyArray<readonly [string, string]> = [["GET", path], ["GET", `${path}/*`]]

const folder = fileURLToPath(new URL("../console/", import.meta.url))

const contentTypes: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml"
}

/**
 * Only this origin's scripts, styles and API; no inline script or style, no
 * eval, no plugins, no framing, no form posts elsewhere; DOM sinks that parse
 * HTML (innerHTML and friends) refuse strings altogether (Trusted Types with no
 * policy), so text from a model or a tool can only ever become text.
 */
export const contentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  // blob: the previews of files the console fetched with the key (an image shown from its bytes).
  "img-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'"
].join("; ")

const securityHeaders = {
  "content-security-policy": contentSecurityPolicy,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  // The files change with the service's version: always revalidate.
  "cache-control": "no-cache"
}

interface Asset {
  readonly body: Uint8Array
  readonly contentType: string
}

/** The folders whose files are served (`views/main.js` is served as `/console/views/main.js`). */
const folders: ReadonlyArray<string> = ["", "views/"]

/** The servable files by name, relative to `console/` (other folders and other kinds of files are not served). */
const readAssets = (): ReadonlyMap<string, Asset> =>
  new Map(
    folders.flatMap((sub) =>
      readdirSync(folder + sub, { withFileTypes: true }).flatMap((entry) => {
        const contentType = contentTypes[extname(entry.name)]
        return entry.isFile() && contentType !== undefined
          ? [[sub + entry.name, { body: readFileSync(folder + sub + entry.name), contentType }] as const]
          : []
      })
    )
  )

const serve = (asset: Asset | undefined) =>
  asset === undefined
    ? Effect.map(CurrentRequestId, (requestId) =>
      rawEnvelope(404, "route_not_found", "The console has no file of this name.", requestId))
    : Effect.succeed(
      HttpServerResponse.uint8Array(asset.body, { contentType: asset.contentType, headers: securityHeaders })
    )

export const layer: Layer.Layer<never, never, HttpRouter.HttpRouter> = Layer.unwrap(
  Effect.map(Effect.orDie(Effect.try(readAssets)), (assets) =>
    // `/console/*` also answers `/console` (and `/console/`): the page.
    HttpRouter.add(
      "GET",
      `${path}/*`,
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        const name = new URL(request.url, "http://localhost").pathname.slice(path.length + 1)
        return serve(assets.get(name === "" ? "index.html" : name))
      })
    ))
)
