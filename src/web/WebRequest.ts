/**
 * One outbound web request of the web tools, through the service's guarded
 * client (src/outbound/): the whole exchange bounded in time, the body read up
 * to a byte cap (a larger body is refused, not cut), and every request sent
 * with the documented User-Agent. Failures carry the code the model reads.
 */
import { Data, Duration, Effect } from "effect"
import type { GuardedFetch } from "../outbound/Outbound.ts"
import { UrlRefused } from "../outbound/Outbound.ts"

/** Sent with every web_fetch and web_search request (docs/guide/web.md). */
export const userAgent = "svc-agent-web/1.0 (+web_fetch; an AI agent's request on a user's behalf)"

/** How long one request may take, headers and body together. */
export const requestTimeoutMs = 30_000

export class WebRequestFailed extends Data.TaggedError("WebRequestFailed")<{
  readonly code: "url_not_allowed" | "fetch_failed" | "fetch_timeout" | "response_too_large"
  readonly message: string
}> {}

export interface WebResponse {
  readonly url: string
  readonly status: number
  readonly contentType: string
  readonly bytes: Uint8Array
}

const tooLarge = (url: string, maxBytes: number) =>
  new WebRequestFailed({
    code: "response_too_large",
    message: `${url} is larger than ${maxBytes} bytes (maxBytes); nothing of it was kept.`
  })

/** The body up to `maxBytes`; undefined when it is larger (the rest is not read). */
const readCapped = async (response: Response, maxBytes: number): Promise<Uint8Array | undefined> => {
  const declared = Number(response.headers.get("content-length") ?? Number.NaN)
  if (declared > maxBytes) {
    await response.body?.cancel()
    return undefined
  }
  const reader = response.body?.getReader()
  if (reader === undefined) return new Uint8Array()
  const chunks: Array<Uint8Array> = []
  let total = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    total += value.byteLength
    if (total > maxBytes) {
      await reader.cancel()
      return undefined
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks)
}

/** `init` sent to `url` through `fetch`; the answer whatever its status. */
export const request = (
  fetch: GuardedFetch,
  url: string,
  init: { readonly method?: string; readonly headers?: Record<string, string>; readonly body?: string },
  maxBytes: number
): Effect.Effect<WebResponse, WebRequestFailed> =>
  Effect.tryPromise({
    try: async (signal) => {
      const response = await fetch(url, {
        method: init.method ?? "GET",
        headers: { "user-agent": userAgent, ...init.headers },
        ...(init.body === undefined ? {} : { body: init.body }),
        signal
      })
      const bytes = await readCapped(response, maxBytes)
      return bytes === undefined ? undefined : {
        url: response.url === "" ? url : response.url,
        status: response.status,
        contentType: response.headers.get("content-type") ?? "",
        bytes
      }
    },
    catch: (cause) =>
      cause instanceof UrlRefused
        ? new WebRequestFailed({ code: "url_not_allowed", message: `The URL is not allowed: ${cause.message}.` })
        : new WebRequestFailed({ code: "fetch_failed", message: `${url} could not be fetched: ${reasonOf(cause)}` })
  }).pipe(
    Effect.flatMap((response) =>
      response === undefined ? Effect.fail(tooLarge(url, maxBytes)) : Effect.succeed(response)
    ),
    Effect.timeoutOrElse({
      duration: Duration.millis(requestTimeoutMs),
      orElse: () =>
        Effect.fail(
          new WebRequestFailed({
            code: "fetch_timeout",
            message: `${url} did not answer within ${requestTimeoutMs} ms.`
          })
        )
    })
  )

/** Node's and OpenSSL's codes for a server certificate that failed verification (untrusted, expired, another name). */
const certificateCodes = /CERT|UNABLE_TO_VERIFY|INVALID_CA|HOSTNAME_MISMATCH/

const reasonOf = (cause: unknown): string => {
  if (!(cause instanceof Error)) return String(cause)
  const inner = cause.cause instanceof Error ? cause.cause : undefined
  const code = inner !== undefined && "code" in inner && typeof inner.code === "string" ? inner.code : ""
  if (inner !== undefined && certificateCodes.test(code)) {
    return `its TLS certificate could not be verified (${inner.message}).`
  }
  return `${cause.message}${inner === undefined ? "" : `: ${inner.message}`}`
}
