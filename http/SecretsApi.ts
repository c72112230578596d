/** Contract of secrets (4.9) and secret contexts (this service's design, see README). */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { ClientId } from "../domain/Ids.ts"
import { MetadataValue } from "../domain/Metadata.ts"
import { Deleted, Page, PageQuery } from "../domain/Page.ts"
import { Secret, SecretCreate, SecretPatch, SecretRotate } from "../domain/Secret.ts"
import { SecretContext, SecretContextCreate, SecretContextPatch } from "../domain/SecretContext.ts"

/** `metadata[<key>]=<value>` (any number of pairs, every one must match), keys as metadata keys are. */
const MetadataFilterKey = Schema.String.check(
  Schema.isPattern(/^metadata\[.{1,40}\]$/, { message: "metadata filters are metadata[<key of 1 to 40 characters>]=<value>" })
)

const secretParams = { id: ClientId.secret }
const contextParams = { id: ClientId.secretContext }

export const SecretsApi = HttpApiGroup.make("secrets")
  .add(
    HttpApiEndpoint.get("list", "/v1/secrets", {
      query: Schema.StructWithRest(Schema.Struct({ ...PageQuery, name: Schema.optionalKey(Schema.String) }), [
        Schema.Record(MetadataFilterKey, MetadataValue)
      ]),
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
