/** Contract of secrets (4.9) and secret contexts (this service's design, see README), with what the reference page says of each. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { ClientId } from "../domain/Ids.ts"
import { MetadataValue } from "../domain/Metadata.ts"
import { Deleted, Page, PageQuery } from "../domain/Page.ts"
import { Secret, SecretCreate, SecretPatch, SecretRotate } from "../domain/Secret.ts"
import { SecretContext, SecretContextCreate, SecretContextPatch } from "../domain/SecretContext.ts"
import { doc, docWithBody, ExampleIds } from "./ApiDocs.ts"
import { ApiConflict, ApiForbidden, ApiNotFound, ApiPayloadTooLarge, ApiServiceUnavailable } from "./ErrorEnvelope.ts"
import { IdempotencyHeaders } from "./Headers.ts"

/** `metadata[<key>]=<value>` (any number of pairs, every one must match), keys as metadata keys are. */
// A template literal (not a plain string) so that the typed client's query keeps `limit` a number.
const MetadataFilterKey = Schema.TemplateLiteral(["metadata[", Schema.String, "]"]).check(
  Schema.isPattern(/^metadata\[.{1,40}\]$/, {
    message: "metadata filters are metadata[<key of 1 to 40 characters>]=<value>"
  })
)

const secretParams = { id: ClientId.secret }
const contextParams = { id: ClientId.secretContext }

const projections: typeof SecretContextCreate.Encoded["projections"] = [
  { type: "workspace_env", secretId: ExampleIds.secret, env: "GITHUB_TOKEN" }
]

export const SecretsApi = HttpApiGroup.make("secrets")
  .add(
    HttpApiEndpoint.get("list", "/v1/secrets", {
      query: Schema.StructWithRest(Schema.Struct({ ...PageQuery, name: Schema.optionalKey(Schema.String) }), [
        Schema.Record(MetadataFilterKey, MetadataValue)
      ]),
      success: Page(Secret)
    }).annotateMerge(
      doc(
        "List secrets",
        "The workspace's secrets, newest first, without their values. Narrow the list with `name=<exact name>` " +
          "and any number of `metadata[<key>]=<value>` pairs, all of which must match."
      )
    )
  )
  .add(
    HttpApiEndpoint.post("create", "/v1/secrets", {
      headers: IdempotencyHeaders,
      payload: SecretCreate,
      success: Secret,
      error: [ApiConflict, ApiPayloadTooLarge, ApiServiceUnavailable]
    }).annotateMerge(
      docWithBody(
        "Store a secret",
        "Stores a value (UTF-8, at most 64 KiB), encrypted under the service's master key. The value is write-only: " +
          "no answer, log line or error message shows it again. Tool servers, HTTP connections and secret contexts refer to it by id, " +
          "and it is decrypted only at the moment one of them uses it. Names are unique in the organization.",
        SecretCreate,
        {
          name: "github-token",
          value: "ghp_exampleOnly0000000000000000000000",
          contentType: "text/plain",
          metadata: { owner: "platform" }
        }
      )
    )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/secrets/:id", {
      params: secretParams,
      success: Secret,
      error: [ApiForbidden, ApiNotFound]
    }).annotateMerge(
      doc("Get a secret", "The secret's name, content type, metadata and `configVersion`; never its value.")
    )
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/secrets/:id", {
      params: secretParams,
      payload: SecretPatch,
      success: Secret,
      error: [ApiForbidden, ApiNotFound, ApiConflict, ApiPayloadTooLarge]
    })
      .annotateMerge(
        docWithBody(
          "Rename a secret or change its details",
          "Changes the name or the content type, or merges metadata (`null` removes a key). The value changes only by rotating it.",
          SecretPatch,
          { name: "github-token-ci", metadata: { owner: null } }
        )
      )
  )
  .add(
    HttpApiEndpoint.delete("delete", "/v1/secrets/:id", {
      params: secretParams,
      success: Deleted("secret"),
      error: [ApiForbidden, ApiNotFound, ApiConflict]
    })
      .annotateMerge(
        doc(
          "Delete a secret",
          "Deletes the secret unless something still uses it: then 409 `resource_in_use`, with the tool servers, HTTP connections " +
            "and secret contexts that bind it in `details.inUseBy`."
        )
      )
  )
  .add(
    HttpApiEndpoint.post("rotate", "/v1/secrets/:id/rotate", {
      headers: IdempotencyHeaders,
      params: secretParams,
      payload: SecretRotate,
      success: Secret,
      error: [ApiForbidden, ApiNotFound, ApiConflict, ApiPayloadTooLarge, ApiServiceUnavailable]
    }).annotateMerge(
      docWithBody(
        "Rotate a secret's value",
        "Replaces the value (encrypted under the current master key) and increments `configVersion`. " +
          "Whatever binds the secret uses the new value from its next use on.",
        SecretRotate,
        { value: "ghp_rotatedExampleOnly00000000000000000" }
      )
    )
  )
  .annotate(
    OpenApi.Description,
    "Secrets: write-only values (tokens, keys) that tool servers, HTTP connections and workspaces use without ever showing them."
  )

export const SecretContextsApi = HttpApiGroup.make("secretContexts")
  .add(
    HttpApiEndpoint.get("list", "/v1/secret-contexts", { query: PageQuery, success: Page(SecretContext) })
      .annotateMerge(
        doc("List secret contexts", "The workspace's secret contexts, newest first, a page at a time.")
      )
  )
  .add(
    HttpApiEndpoint.post("create", "/v1/secret-contexts", {
      headers: IdempotencyHeaders,
      payload: SecretContextCreate,
      success: SecretContext,
      error: [ApiConflict, ApiPayloadTooLarge, ApiServiceUnavailable]
    })
      .annotateMerge(
        docWithBody(
          "Create a secret context",
          "Names a set of projections of secrets into a destination. A `workspace_env` projection sets a secret as an environment " +
            "variable of a managed workspace's commands and services, masked in their output. Agents use contexts through " +
            "`workspace.secretContexts`; every secret must belong to the same workspace.",
          SecretContextCreate,
          { name: "deploy-env", projections, metadata: { purpose: "deploys" } }
        )
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/secret-contexts/:id", {
      params: contextParams,
      success: SecretContext,
      error: [ApiForbidden, ApiNotFound]
    })
      .annotateMerge(
        doc(
          "Get a secret context",
          "The context and its projections: which secret goes to which variable (never the values)."
        )
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/secret-contexts/:id", {
      params: contextParams,
      payload: SecretContextPatch,
      success: SecretContext,
      error: [ApiForbidden, ApiNotFound, ApiConflict, ApiPayloadTooLarge]
    })
      .annotateMerge(
        docWithBody(
          "Update a secret context",
          "Renames the context, replaces its projections or merges metadata. Runs started afterwards use the new projections.",
          SecretContextPatch,
          { projections: [...projections, { type: "workspace_env", secretId: ExampleIds.secret, env: "GH_TOKEN" }] }
        )
      )
  )
  .add(
    HttpApiEndpoint.delete("delete", "/v1/secret-contexts/:id", {
      params: contextParams,
      success: Deleted("secret_context"),
      error: [ApiForbidden, ApiNotFound, ApiConflict]
    }).annotateMerge(
      doc(
        "Delete a secret context",
        "Deletes the context unless agents use it: then 409 `resource_in_use` with `details.inUseByAgentIds`."
      )
    )
  )
  .annotate(
    OpenApi.Description,
    "Secret contexts: named sets of secrets projected into a managed workspace's environment."
  )
