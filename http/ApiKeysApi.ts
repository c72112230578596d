/** Contract of the API keys routes (this service's: spec 5 says only that a revoked key is refused), with what the reference page says of each. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { ApiKey, ApiKeyCreate, ApiKeyCreated } from "../domain/ApiKey.ts"
import { ClientId } from "../domain/Ids.ts"
import { Page, PageQuery } from "../domain/Page.ts"
import { doc, docWithBody } from "./ApiDocs.ts"
import { ApiConflict, ApiForbidden, ApiNotFound, ApiPayloadTooLarge, ApiServiceUnavailable } from "./ErrorEnvelope.ts"
import { IdempotencyHeaders } from "./Headers.ts"

const params = { id: ClientId.apiKey }

const adminOnly = "Only an admin key may call it (another key: 403 `permission_denied`)."

export const ApiKeysApi = HttpApiGroup.make("apiKeys")
  .add(
    HttpApiEndpoint.get("list", "/v1/api-keys", { query: PageQuery, success: Page(ApiKey), error: [ApiForbidden] })
      .annotateMerge(
        doc(
          "List API keys",
          "The keys of your organization, every workspace's, revoked ones included, newest first, a page at a time. " +
            "Each shows its name, the first characters of the key (`prefix`), workspace, role, when it was created, last " +
            `used and revoked; never the key itself. ${adminOnly}`
        )
      )
  )
  .add(
    HttpApiEndpoint.post("create", "/v1/api-keys", {
      payload: ApiKeyCreate,
      headers: IdempotencyHeaders,
      success: ApiKeyCreated,
      error: [ApiForbidden, ApiConflict, ApiPayloadTooLarge, ApiServiceUnavailable]
    }).annotateMerge(
      docWithBody(
        "Create an API key",
        "Creates a key in your organization, for `workspace` (default: your key's) with `role` `member` (default) or " +
          "`admin`. The answer carries the secret `key`: it is shown only there, the service keeps only its hash. " +
          `Send \`Idempotency-Key\` to make a retry return the first answer, the same key included. ${adminOnly}`,
        ApiKeyCreate,
        { name: "ci-deploys", workspace: "prod", role: "member" }
      )
    )
  )
  .add(
    HttpApiEndpoint.post("revoke", "/v1/api-keys/:id/revoke", {
      params,
      headers: IdempotencyHeaders,
      success: ApiKey,
      error: [ApiForbidden, ApiNotFound, ApiConflict, ApiServiceUnavailable]
    }).annotateMerge(
      doc(
        "Revoke an API key",
        "Revokes a key of your organization (another organization's: 403 `permission_denied`). From then on the key " +
          "is 401 `invalid_api_key`: at once on the process that revoked it, within 5 s on every other. Revoking a " +
          `revoked key answers it unchanged. ${adminOnly}`
      )
    )
  )
  .annotate(
    OpenApi.Description,
    "API keys: an admin key creates, lists and revokes the keys of its organization."
  )
