/** Handlers of code-hosting connections, and of GitHub's callback and webhooks. */
import { Effect, Option } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Authorization, CodehostConnection, TestResult } from "../domain/Codehost.ts"
import { type CallbackOutcome, CodehostAuthorize } from "../src/codehost/ConnectionAuthorize.ts"
import { CodehostConnections } from "../src/codehost/Connections.ts"
import { CodehostWebhooks } from "../src/codehost/ConnectionWebhooks.ts"
import { Api } from "./Api.ts"
import { authed } from "./ApiMiddleware.ts"
import { repositoryCursor } from "./CodehostApi.ts"
import { envelope } from "./ErrorEnvelope.ts"
import { idempotent } from "./Idempotent.ts"

export const CodehostHandlers = HttpApiBuilder.group(Api, "codehostConnections", (handlers) =>
  Effect.gen(function*() {
    const connections = yield* CodehostConnections
    const authorize = yield* CodehostAuthorize
    return handlers
      .handle("authorize", (route) =>
        authed(idempotent(route, Authorization, (p) => authorize.authorize(p, route.payload))))
      .handle("authorization", ({ params }) =>
        authed((p) => authorize.status(p, params.id)))
      .handle("list", ({ query }) => authed((p) => connections.list(p, query)))
      .handle("get", ({ params }) => authed((p) => connections.get(p, params.id)))
      .handle("update", ({ params, payload }) => authed((p) => connections.update(p, params.id, payload)))
      .handle("delete", ({ params }) => authed((p) => connections.remove(p, params.id)))
      .handle("repositories", ({ params, query }) =>
        authed((p) =>
          connections.repositories(p, params.id, {
            limit: query.limit,
            after: query.cursor === undefined ? undefined : Option.getOrUndefined(repositoryCursor(query.cursor))
          })
        ))
      .handle("sync", (route) =>
        authed(idempotent(route, CodehostConnection, (p) =>
          connections.sync(p, route.params.id))))
      .handle("test", (route) =>
        authed(idempotent(route, TestResult, (p) => connections.test(p, route.params.id))))
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
