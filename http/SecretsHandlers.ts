/** Handlers of secrets and secret contexts. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Secret } from "../domain/Secret.ts"
import { SecretContext } from "../domain/SecretContext.ts"
import { SecretContexts } from "../src/secrets/SecretContexts.ts"
import { Secrets } from "../src/secrets/Secrets.ts"
import { Api } from "./Api.ts"
import { authed } from "./ApiMiddleware.ts"
import { idempotent } from "./Idempotent.ts"

/** The `metadata[<key>]=<value>` pairs of the (decoded) query. */
const metadataFilter = (
  query: Readonly<Record<string, string | number | undefined>>
): Record<string, string> | undefined => {
  const filter: Record<string, string> = {}
  for (const [name, value] of Object.entries(query)) {
    const match = /^metadata\[(.+)\]$/.exec(name)
    if (match && typeof value === "string") filter[match[1]] = value
  }
  return Object.keys(filter).length === 0 ? undefined : filter
}

export const SecretsHandlers = HttpApiBuilder.group(
  Api,
  "secrets",
  (handlers) =>
    Effect.map(Secrets, (secrets) =>
      handlers
        .handle(
          "list",
          ({ query }) => authed((p) => secrets.list(p, query, { name: query.name, metadata: metadataFilter(query) }))
        )
        .handle("create", (route) => authed(idempotent(route, Secret, (p) => secrets.create(p, route.payload))))
        .handle("get", ({ params }) => authed((p) => secrets.get(p, params.id)))
        .handle("update", ({ params, payload }) => authed((p) => secrets.update(p, params.id, payload)))
        .handle("delete", ({ params }) => authed((p) => secrets.remove(p, params.id)))
        .handle(
          "rotate",
          (route) => authed(idempotent(route, Secret, (p) => secrets.rotate(p, route.params.id, route.payload.value)))
        ))
)

export const SecretContextsHandlers = HttpApiBuilder.group(
  Api,
  "secretContexts",
  (handlers) =>
    Effect.map(SecretContexts, (contexts) =>
      handlers
        .handle("list", ({ query }) => authed((p) => contexts.list(p, query)))
        .handle("create", (route) => authed(idempotent(route, SecretContext, (p) => contexts.create(p, route.payload))))
        .handle("get", ({ params }) => authed((p) => contexts.get(p, params.id)))
        .handle("update", ({ params, payload }) => authed((p) => contexts.update(p, params.id, payload)))
        .handle("delete", ({ params }) => authed((p) => contexts.remove(p, params.id))))
)
