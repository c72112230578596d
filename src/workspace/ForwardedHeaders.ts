/**
 * The headers a proxy of the service passes on (the egress proxy of a
 * workspace, the preview proxy): never the hop-by-hop ones, nor those a
 * `Connection` header names, nor proxy credentials, nor what the caller drops.
 */
import type { IncomingMessage } from "node:http"

const hopByHop = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade"
])

const none: ReadonlySet<string> = new Set()

export const forwardable = (
  headers: IncomingMessage["headers"],
  dropped: ReadonlySet<string> = none
): Record<string, string | Array<string>> => {
  const named = new Set(String(headers["connection"] ?? "").split(",").map((h) => h.trim().toLowerCase()))
  const out: Record<string, string | Array<string>> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || hopByHop.has(name) || named.has(name) || dropped.has(name)) continue
    out[name] = value
  }
  return out
}

/** One value per header (a repeated one joined with `, `), for responses built as a plain record. */
export const joined = (headers: Record<string, string | Array<string>>): Record<string, string> =>
  Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(", ") : value])
  )
