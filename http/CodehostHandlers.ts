/** Handlers of code-hosting connections, and of GitHub's callback and webhooks. */
import { Effect, Option } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { type CallbackOutcome, CodehostAuthorize } from "../src/codehost/ConnectionAuthorize.ts"
import { CodehostConnections } from "../src/codehost/Connections.ts"
import { CodehostWebhooks } from "../src/codehost/ConnectionWebhooks.ts"
import { Api } from "./Api.ts"
import { CurrentPrincipal } from "./ApiMiddleware.ts"
import { repositoryCursor } from "./CodehostApi.ts"
import { envelope } from "./ErrorEnvelope.ts"

export const CodehostHandlers = HttpApiBuilder.group(Api, "codehostConnections", (handlers) =>
  Effect.gen(function*() {
    const connections = yield* CodehostConnections
    const authorize = yield* CodehostAuthorize
    const as = <A, E, R>(f: (p: typeof CurrentPrincipal.Service) => Effect.Effect<A, E, R>) =>
      Effect.flatMap(CurrentPrincipal, f)
    return handlers
      .handle("authorize", ({ payload }) => as((p) => authorize.authorize(p, payload)).pipe(envelope))
      .handle("authorization", ({ params }) => as((p) => authorize.status(p, params.id)).pipe(envelope))
      .handle("list", ({ query }) => as((p) => connections.list(p, query)).pipe(envelope))
      .handle("get", ({ params }) => as((p) => connections.get(p, params.id)).pipe(envelope))
      .handle("update", ({ params, payload }) => as((p) => connections.update(p, params.id, payload)).pipe(envelope))
      .handle("delete", ({ params }) => as((p) => connections.remove(p, params.id)).pipe(envelope))
      .handle("repositories", ({ params, query }) =>
        as((p) =>
          connections.repositories(p, params.id, {
            limit: query.limit,
            after: query.cursor === undefined ? undefined : Option.getOrUndefined(repositoryCursor(query.cursor))
          })
        ).pipe(envelope))
      .handle("sync", ({ params }) => as((p) => connections.sync(p, params.id)).pipe(envelope))
      .handle("test", ({ params }) => as((p) => connections.test(p, params.id)).pipe(envelope))
  }))

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c] ?? c)

/** Where the person lands: the client's returnUrl with the outcome added, else a small page saying it. */
const landing = (outcome: CallbackOutcome) => {
  if (outcome.returnUrl !== null) {
    const url = new URL(outcome.returnUrl)
    url.searchParams.set("connectionId", outcome.connectionId)
    url.searchParams.set("status", outcome.status)
    return HttpServerResponse.redirect(url.toString(), { status: 302 })
  }
  const reason = outcome.statusReason === null ? "" : `<p>${escapeHtml(outcome.statusReason)}</p>`
  const title = outcome.status === "ready" ? "GitHub is connected" : "GitHub connection: " + outcome.status
  return HttpServerResponse.html(
    `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body>` +
      `<h1>${escapeHtml(title)}</h1><p>Connection <code>${escapeHtml(outcome.connectionId)}</code> is <strong>${
        escapeHtml(outcome.status)
      }</strong>.</p>` +
      `${reason}<p>You can close this page.</p></body></html>`
  ).pipe(
    HttpServerResponse.setHeaders({ "cache-control": "no-store", "content-security-policy": "default-src 'none'" })
  )
}

export const CodehostCallbacksHandlers = HttpApiBuilder.group(
  Api,
  "codehostCallbacks",
  (handlers) =>
    Effect.gen(function*() {
      const authorize = yield* CodehostAuthorize
      const webhooks = yield* CodehostWebhooks
      return handlers
        .handle("callback", ({ query }) => authorize.callback(query).pipe(Effect.map(landing), envelope))
        .handle("webhooks", ({ headers }) =>
          Effect.gen(function*() {
            const request = yield* HttpServerRequest.HttpServerRequest
            const body = yield* Effect.orDie(request.text)
            return yield* webhooks.receive(headers["x-github-event"], headers["x-hub-signature-256"], body)
          }).pipe(envelope))
    })
)
