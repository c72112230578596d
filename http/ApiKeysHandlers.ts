/**
 * Handlers of the API keys routes. A create sent with `Idempotency-Key`
 * answers a retry with the first answer, the secret included; the record
 * kept for that holds the secret sealed under the master key (as secrets
 * are), never in the clear.
 */
import { Effect, Redacted, Schema } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { ApiKey, type ApiKeyCreated } from "../domain/ApiKey.ts"
import { ApiKeys } from "../src/access/ApiKeys.ts"
import { SecretBox } from "../src/secrets/SecretBox.ts"
import { Api } from "./Api.ts"
import { authed } from "./ApiMiddleware.ts"
import { idempotent } from "./Idempotent.ts"

/** What an Idempotency-Key record keeps of a create: the key as listed, and its secret sealed. */
const SealedCreated = Schema.Struct({
  ...ApiKey.fields,
  sealedKey: Schema.Struct({ ciphertext: Schema.String, keyId: Schema.String })
})

export const ApiKeysHandlers = HttpApiBuilder.group(Api, "apiKeys", (handlers) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const box = yield* SecretBox
    const seal = ({ key, ...listed }: ApiKeyCreated) =>
      Effect.map(box.seal(Redacted.make(key)), (sealedKey) => ({ ...listed, sealedKey }))
    const open = ({ sealedKey, ...listed }: typeof SealedCreated.Type) =>
      Effect.map(box.open(sealedKey), (key): ApiKeyCreated => ({ ...listed, key: Redacted.value(key) }))
    return handlers
      .handle("list", ({ query }) => authed((p) => keys.list(p, query)))
      .handle("create", (route) =>
        authed((principal) =>
          Effect.flatMap(
            idempotent(route, SealedCreated, (p) => Effect.flatMap(keys.create(p, route.payload), seal))(principal),
            open
          )
        ))
      .handle("revoke", (route) => authed(idempotent(route, ApiKey, (p) => keys.revoke(p, route.params.id))))
  }))
