/** Contract of secrets (4.9) and secret contexts (this service's design, see README). */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { ClientId } from "../domain/Ids.ts"
import { Deleted, Page, PageQuery } from "../domain/Page.ts"
import { Secret, SecretCreate, SecretPatch, SecretRotate } from "../domain/Secret.ts"
import { SecretContext, SecretContextCreate, SecretContextPatch } from "../domain/SecretContext.ts"

const secretParams = { id: ClientId.secret }
const contextParams = { id: ClientId.secretContext }

export const SecretsApi = HttpApiGroup.make("secrets")
  .add(
    HttpApiEndpoint.get("list", "/v1/secrets", {
      // `metadata[<key>]=<value>` pairs (any number) are read from the raw query string.
      query: { ...PageQuery, name: Schema.optionalKey(Schema.String) },
      success: Page(Secret)
    })
  )
  .add(HttpApiEndpoint.post("create", "/v1/secrets", { payload: SecretCreate, success: Secret }))
  .add(HttpApiEndpoint.get("get", "/v1/secrets/:id", { params: secretParams, success: Secret }))
  .add(HttpApiEndpoint.patch("update", "/v1/secrets/:id", { params: secretParams, payload: SecretPatch, success: Secret }))
  .add(HttpApiEndpoint.delete("delete", "/v1/secrets/:id", { params: secretParams, success: Deleted("secret") }))
  .add(HttpApiEndpoint.post("rotate", "/v1/secrets/:id/rotate", { params: secretParams, payload: SecretRotate, success: Secret }))

export const SecretContextsApi = HttpApiGroup.make("secretContexts")
  .add(HttpApiEndpoint.get("list", "/v1/secret-contexts", { query: PageQuery, success: Page(SecretContext) }))
  .add(HttpApiEndpoint.post("create", "/v1/secret-contexts", { payload: SecretContextCreate, success: SecretContext }))
  .add(HttpApiEndpoint.get("get", "/v1/secret-contexts/:id", { params: contextParams, success: SecretContext }))
  .add(
    HttpApiEndpoint.patch("update", "/v1/secret-contexts/:id", { params: contextParams, payload: SecretContextPatch, success: SecretContext })
  )
  .add(HttpApiEndpoint.delete("delete", "/v1/secret-contexts/:id", { params: contextParams, success: Deleted("secret_context") }))
