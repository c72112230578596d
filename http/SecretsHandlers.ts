/** Handlers of secrets and secret contexts. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { SecretContexts } from "../src/secrets/SecretContexts.ts"
import { Secrets } from "../src/secrets/Secrets.ts"
import { Api } from "./Api.ts"
import { CurrentPrincipal } from "./ApiMiddleware.ts"
import { envelope } from "./ErrorEnvelope.ts"

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
        .handle("list", ({ query }) =>
          Effect.flatMap(
            CurrentPrincipal,
            (p) => secrets.list(p, query, { name: query.name, metadata: metadataFilter(query) })
          ).pipe(envelope))
        .handle(
          "create",
          ({ payload }) => Effect.flatMap(CurrentPrincipal, (p) => secrets.create(p, payload)).pipe(envelope)
        )
        .handle(
          "get",
          ({ params }) => Effect.flatMap(CurrentPrincipal, (p) => secrets.get(p, params.id)).pipe(envelope)
        )
        .handle("update", ({ params, payload }) =>
          Effect.flatMap(CurrentPrincipal, (p) => secrets.update(p, params.id, payload)).pipe(envelope))
        .handle("delete", ({ params }) =>
          Effect.flatMap(CurrentPrincipal, (p) =>
            secrets.remove(p, params.id)).pipe(envelope))
        .handle("rotate", ({ params, payload }) =>
          Effect.flatMap(CurrentPrincipal, (p) =>
            secrets.rotate(p, params.id, payload.value)).pipe(envelope)))
)

export const SecretContextsHandlers = HttpApiBuilder.group(
  Api,
  "secretContexts",
  (handlers) =>
    Effect.map(SecretContexts, (contexts) =>
      handlers
        .handle("list", ({ query }) => Effect.flatMap(CurrentPrincipal, (p) => contexts.list(p, query)).pipe(envelope))
        .handle(
          "create",
          ({ payload }) => Effect.flatMap(CurrentPrincipal, (p) => contexts.create(p, payload)).pipe(envelope)
        )
        .handle(
          "get",
          ({ params }) => Effect.flatMap(CurrentPrincipal, (p) => contexts.get(p, params.id)).pipe(envelope)
        )
        .handle("update", ({ params, payload }) =>
          Effect.flatMap(CurrentPrincipal, (p) => contexts.update(p, params.id, payload)).pipe(envelope))
        .handle("delete", ({ params }) =>
          Effect.flatMap(CurrentPrincipal, (p) =>
            contexts.remove(p, params.id)).pipe(envelope)))
)
