/**
 * One preview request, forwarded over HTTP/1.1 to a service port's unix
 * socket (PortSocket): the method, the path below the preview prefix with its
 * query, the headers but hop-by-hop ones and the caller's credentials
 * (`Authorization`, `Cookie`: every preview shares the previews' one origin,
 * where another workspace's page may have set a cookie; nothing of a caller's
 * reaches a workspace), the body streamed. `Host` is `localhost:<port>`
 * (what a development server expects), the original one in
 * `X-Forwarded-Host`, with `X-Forwarded-Proto` and `X-Forwarded-Prefix`. The
 * answer comes back streamed, without hop-by-hop headers nor `Set-Cookie`.
 * No timeout: a preview may hold a long poll or an event stream open; a
 * client that goes away closes the upstream request.
 */
import { Effect } from "effect"
import { type IncomingMessage, type OutgoingHttpHeaders, request as httpRequest, type ServerResponse } from "node:http"
import { forwardable, joined } from "./ForwardedHeaders.ts"

const requestDropped = new Set(["authorization", "cookie", "host"])
/**
 * Every preview shares the previews' one origin: a previewed page may set no cookie there (the
 * other workspaces' previews would get it), nor widen a service worker's scope beyond its own
 * preview path.
 */
const responseDropped = new Set(["set-cookie", "service-worker-allowed"])

export interface Upstream {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: IncomingMessage
}

/** Forwards `incoming` to the socket at `socketPath`; fails when nothing answers there. */
export const forward = (input: {
  readonly incoming: IncomingMessage
  readonly outgoing: ServerResponse
  readonly socketPath: string
  /** Path and query below the preview prefix (starts with `/`). */
  readonly path: string
  readonly port: number
  readonly prefix: string
  readonly proto: string
}): Effect.Effect<Upstream, Error> =>
  Effect.callback<Upstream, Error>((resume) => {
    const { incoming } = input
    const headers: OutgoingHttpHeaders = {
      ...forwardable(incoming.headers, requestDropped),
      host: `localhost:${input.port}`,
      "x-forwarded-host": incoming.headers.host ?? "",
      "x-forwarded-proto": input.proto,
      "x-forwarded-prefix": input.prefix
    }
    // agent false: a connection of its own, never one pooled for another socket path.
    const upstream = httpRequest({
      socketPath: input.socketPath,
      agent: false,
      method: incoming.method,
      path: input.path,
      headers
    }, (answer) =>
      resume(Effect.succeed({
        status: answer.statusCode ?? 502,
        headers: joined(forwardable(answer.headers, responseDropped)),
        body: answer
      })))
    upstream.on("error", (error) => resume(Effect.fail(error)))
    // The client went away (or the answer is complete): nothing more to carry.
    input.outgoing.on("close", () => upstream.destroy())
    incoming.pipe(upstream)
    return Effect.sync(() => upstream.destroy())
  })
