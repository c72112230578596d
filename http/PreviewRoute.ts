/**
 * `ANY /v1/previews/<token>/<path>`: the preview URLs of managed workspaces
 * (src/workspace/Previews.ts), served by the previews' own listener
 * (SVC_PREVIEW_PORT, http/PreviewServer.ts), never the API's: a previewed page
 * is code a workspace wrote, kept off the origin where the console keeps its
 * key. On the API's listener the same paths are 404 (`elsewhere`), with no
 * redirect: a redirect would keep nothing working past the URLs' expiry (two
 * hours at most) and would send a browser on from the API's origin.
 * No API key: the signed token is the grant. A
 * forged or expired token is 403 `permission_denied` before anything of the
 * workspace is touched; a port with no running service (on this node) is 502
 * `service_unavailable`; anything else is the service's own answer, streamed
 * (the router middleware leaves these responses as they are). Preview
 * requests stay out of the access log: their URL is the grant.
 */
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { Effect, Option } from "effect"
import { HttpMiddleware, HttpRouter, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { IncomingMessage, ServerResponse } from "node:http"
import * as PortSocket from "../src/workspace/PortSocket.ts"
import { PreviewOrigin } from "../src/workspace/PreviewOrigin.ts"
import * as PreviewProxy from "../src/workspace/PreviewProxy.ts"
import { Previews } from "../src/workspace/Previews.ts"
import { Sandbox } from "../src/workspace/Sandbox.ts"
import { WorkspaceLifecycle } from "../src/workspace/WorkspaceLifecycle.ts"
import { CurrentRequestId, rawEnvelope } from "./ErrorEnvelope.ts"

export const prefix = "/v1/previews/"

const handler = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const requestId = yield* CurrentRequestId
    const url = new URL(request.url, "http://localhost")
    const rest = url.pathname.slice(prefix.length)
    const slash = rest.indexOf("/")
    const token = slash === -1 ? rest : rest.slice(0, slash)
    const previews = yield* Previews
    const grant = yield* previews.grant(token)
    if (Option.isNone(grant)) {
      return rawEnvelope(
        403,
        "permission_denied",
        "This preview URL is forged or has expired; read the thread again for a current one (workspace.previews).",
        requestId
      )
    }
    // Relative links of the previewed page resolve below the token only with the trailing slash.
    // Relative, so whatever a reverse proxy in front of the previews' listener put before the path is kept.
    if (slash === -1) return HttpServerResponse.redirect(`${token}/${url.search}`, { status: 308 })
    const { threadId, port } = grant.value
    // Preview traffic is use of the workspace: it postpones hibernation.
    yield* (yield* WorkspaceLifecycle).touch(threadId)
    const unavailable = (why: string) =>
      rawEnvelope(502, "service_unavailable", `Nothing answers on port ${port} of this workspace: ${why}.`, requestId)
    const incoming = NodeHttpServerRequest.toIncomingMessage(request)
    const outgoing = NodeHttpServerRequest.toServerResponse(request)
    if (!(incoming instanceof IncomingMessage) || !(outgoing instanceof ServerResponse)) {
      return unavailable("previews are served over HTTP/1.1")
    }
    const sandbox = yield* Sandbox
    const origin = yield* (yield* PreviewOrigin).current
    const socket = PortSocket.open(sandbox.portsDirOf(threadId), port)
    if (socket === undefined) return unavailable("no service of the workspace listens on it on this node")
    const forwarded = yield* PreviewProxy.forward({
      incoming,
      outgoing,
      socketPath: socket.path,
      path: `${rest.slice(slash)}${url.search}`,
      port,
      prefix: `${prefix}${token}`,
      proto: new URL(origin).protocol.replace(":", "")
    }).pipe(Effect.ensuring(Effect.sync(socket.close)), Effect.result)
    if (forwarded._tag === "Failure") return unavailable(forwarded.failure.message)
    const upstream = forwarded.success
    return HttpServerResponse.raw(upstream.body, { status: upstream.status, headers: upstream.headers })
  }).pipe(HttpMiddleware.withLoggerDisabled)

/** The previews' listener: needs Previews, PreviewOrigin, Sandbox and WorkspaceLifecycle from the application. */
export const layer = HttpRouter.add("*", `${prefix}*`, handler)

/** The API's listener: 404 `route_not_found`, saying where previews are served now; out of the access log too. */
export const elsewhere = HttpRouter.add(
  "*",
  `${prefix}*`,
  Effect.map(CurrentRequestId, (requestId) =>
    rawEnvelope(
      404,
      "route_not_found",
      "Previews are not served on the API's origin: read the thread again for its preview URLs (workspace.previews[].url), on the previews' own origin.",
      requestId
    )).pipe(HttpMiddleware.withLoggerDisabled)
)
