/**
 * Stored bytes as a response: their media type, Content-Length, a download
 * disposition carrying the file name (an ASCII fallback and the UTF-8 name,
 * RFC 6266), and headers that keep a browser from running what it is served
 * (`nosniff`, a sandboxing Content-Security-Policy): the bytes are a
 * client's or a model's, served from the service's own origin.
 */
import type { Stream } from "effect"
import { HttpServerResponse } from "effect/http"

/** `attachment; filename="<ascii>"; filename*=UTF-8''<percent-encoded>`. */
export const contentDisposition = (filename: string): string => {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\%]/g, "_")
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`
  )
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`
}

/** The headers of every download: its disposition, and what keeps a browser from running it. */
export const downloadHeaders = (filename: string) => ({
  "content-disposition": contentDisposition(filename),
  "x-content-type-options": "nosniff",
  "content-security-policy": "default-src 'none'; sandbox",
  "cache-control": "private, no-store"
})

export const bytesResponse = (data: Uint8Array, file: { readonly filename: string; readonly mediaType: string }) =>
  HttpServerResponse.uint8Array(data, { contentType: file.mediaType, headers: downloadHeaders(file.filename) })

/** The same download, streamed (a workspace's file: it is not held whole). */
export const streamResponse = <E>(
  body: Stream.Stream<Uint8Array, E>,
  file: { readonly filename: string; readonly mediaType: string; readonly size: number }
) =>
  HttpServerResponse.stream(body, {
    contentType: file.mediaType,
    contentLength: file.size,
    headers: downloadHeaders(file.filename)
  })
