/**
 * Contract of code-hosting connections (spec 4.8): the authenticated routes,
 * and the two GitHub calls back without an API key (the signed state is the
 * callback's grant, the webhook signature the webhook's).
 */
import { Option, Result, Schema } from "effect"
import { Base64Url } from "effect/encoding"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import {
  Authorization,
  AuthorizationState,
  AuthorizeInput,
  CallbackQuery,
  CodehostConnection,
  ConnectionPatch,
  RepositoryItem,
  repositoryPattern,
  TestResult
} from "../domain/Codehost.ts"
import { ClientId } from "../domain/Ids.ts"
import { Deleted, Page, PageQuery } from "../domain/Page.ts"
import { doc, docWithBody } from "./ApiDocs.ts"
import {
  ApiBadGateway,
  ApiConflict,
  ApiForbidden,
  ApiNotFound,
  ApiPayloadTooLarge,
  ApiServiceUnavailable
} from "./ErrorEnvelope.ts"
import { IdempotencyHeaders } from "./Headers.ts"

const params = { id: ClientId.codehostConnection }

/** The repositories page's cursor: the last repository of the previous page, base64url. */
export const repositoryCursor = (cursor: string): Option.Option<string> =>
  Option.filter(Result.getSuccess(Base64Url.decodeString(cursor)), (name) => repositoryPattern.test(name))

const RepositoriesQuery = {
  limit: PageQuery.limit,
  cursor: Schema.optionalKey(
    Schema.String.check(
      Schema.makeFilter((c: string) => Option.isSome(repositoryCursor(c)), {
        message: "cursor is not a cursor this API returned"
      })
    )
  )
}

const unconfiguredNote =
  " Without a configured GitHub App every route of this group answers 503 `codehost_unconfigured`."

export const CodehostApi = HttpApiGroup.make("codehostConnections")
  .add(
    HttpApiEndpoint.post("authorize", "/v1/codehost-connections/authorize", {
      headers: IdempotencyHeaders,
      payload: AuthorizeInput,
      success: Authorization,
      error: [ApiForbidden, ApiNotFound, ApiConflict, ApiPayloadTooLarge, ApiServiceUnavailable]
    }).annotateMerge(
      docWithBody(
        "Start or repair a GitHub connection",
        "Creates a connection (`pending`) and answers its install URL on GitHub (`/apps/<slug>/installations/new?state=...`): signed, " +
          "single use, valid 30 minutes, and it may be forwarded to an organization owner. With `connectionId` it repairs that " +
          "connection instead (same id, same agent bindings): a fresh URL to reinstall, renew a lost link or capture a new user grant. " +
          "GitHub returns to the callback route, then to `returnUrl` when given." + unconfiguredNote,
        AuthorizeInput,
        { name: "acme-github", returnUrl: "https://app.example.com/settings/github" }
      )
    )
  )
  .add(
    HttpApiEndpoint.get("authorization", "/v1/codehost-connections/authorize/:id", {
      params,
      success: AuthorizationState,
      error: [ApiForbidden, ApiNotFound, ApiServiceUnavailable]
    }).annotateMerge(
      doc(
        "Poll an authorization",
        "`pending` until the installation is bound, `action_required` while an organization owner must approve it, `completed` " +
          "(with the connection) once it is ready. The install URL is never returned again."
      )
    )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/codehost-connections", {
      query: PageQuery,
      success: Page(CodehostConnection),
      error: [ApiServiceUnavailable]
    })
      .annotateMerge(
        doc("List code-hosting connections", "The workspace's GitHub connections, newest first, a page at a time.")
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/codehost-connections/:id", {
      params,
      success: CodehostConnection,
      error: [ApiForbidden, ApiNotFound, ApiServiceUnavailable]
    }).annotateMerge(
      doc(
        "Get a code-hosting connection",
        "The connection's status (with `statusReason`), its GitHub account, the access it grants agents, and `configVersion`."
      )
    )
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/codehost-connections/:id", {
      params,
      payload: ConnectionPatch,
      success: CodehostConnection,
      error: [ApiForbidden, ApiNotFound, ApiConflict, ApiPayloadTooLarge, ApiBadGateway, ApiServiceUnavailable]
    }).annotateMerge(
      docWithBody(
        "Update a code-hosting connection",
        "`access` replaces the grant: `repositories` (each must be selected by the installation on GitHub now, else 400), `owners` " +
          "(where repositories may be created or forked) and `account` (tools acting as the installing person). Access changes increment `configVersion`.",
        ConnectionPatch,
        { access: { repositories: ["acme/api", "acme/web"], owners: ["acme"], account: false } }
      )
    )
  )
  .add(
    HttpApiEndpoint.delete("delete", "/v1/codehost-connections/:id", {
      params,
      success: Deleted("codehost_connection"),
      error: [ApiForbidden, ApiNotFound, ApiConflict, ApiServiceUnavailable]
    }).annotateMerge(
      doc(
        "Delete a code-hosting connection",
        "Deletes the connection (the app stays installed on GitHub) unless agents use it: then 409 `resource_in_use` with `details.inUseByAgentIds`."
      )
    )
  )
  .add(
    HttpApiEndpoint.get("repositories", "/v1/codehost-connections/:id/repositories", {
      params,
      query: RepositoriesQuery,
      success: Page(RepositoryItem),
      error: [ApiForbidden, ApiNotFound, ApiBadGateway, ApiServiceUnavailable]
    })
      .annotateMerge(
        doc(
          "List a connection's repositories",
          "Every repository the installation selects (`grantable`) and whether agents may use it now (`granted`), by name; a granted " +
            "repository the installation no longer selects shows `grantable: false` until a sync removes it."
        )
      )
  )
  .add(
    HttpApiEndpoint.post("sync", "/v1/codehost-connections/:id/sync", {
      headers: IdempotencyHeaders,
      params,
      success: CodehostConnection,
      error: [ApiForbidden, ApiNotFound, ApiConflict, ApiBadGateway, ApiServiceUnavailable]
    })
      .annotateMerge(
        doc(
          "Sync a connection with GitHub",
          "Reads the installation: uninstalled or suspended is `revoked`, repositories removed on GitHub leave the grant, a healthy " +
            "installation heals to `ready`. Newly selected repositories are never granted automatically."
        )
      )
  )
  .add(
    HttpApiEndpoint.post("test", "/v1/codehost-connections/:id/test", {
      headers: IdempotencyHeaders,
      params,
      success: TestResult,
      error: [ApiForbidden, ApiNotFound, ApiBadGateway, ApiServiceUnavailable, ApiConflict]
    }).annotateMerge(
      doc(
        "Test a connection",
        "Changes nothing: verifies the installation, probes each granted repository with a read-only token, checks the user grant when " +
          "account access is on, and answers `ok`, the `status` the connection would have, each repository's result and `accountGrant`."
      )
    )
  )
  .annotate(
    OpenApi.Description,
    "Code-hosting connections: GitHub App installations whose repositories agents may work on."
  )

const Html = Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/html" }))

export const CodehostCallbacksApi = HttpApiGroup.make("codehostCallbacks")
  .add(
    HttpApiEndpoint.get("callback", "/v1/codehost-connections/callback", {
      query: CallbackQuery,
      success: Html,
      error: [ApiForbidden, ApiNotFound, ApiConflict, ApiServiceUnavailable]
    })
      .annotateMerge(
        doc(
          "GitHub's return after installation",
          "Where GitHub sends the installing person (no API key: the signed `state` is the grant). The installation is bound only " +
            "after the person's own OAuth authorization shows they can access it; then a redirect (302) to the `returnUrl` given at " +
            "authorize with `connectionId` and `status` added, or a small HTML page with the status. A forged, used or expired state is 400 `codehost_state_invalid`."
        )
      )
  )
  .add(
    HttpApiEndpoint.post("webhooks", "/v1/codehost-connections/webhooks", {
      headers: { "x-github-event": Schema.String, "x-hub-signature-256": Schema.String },
      success: Schema.Struct({ received: Schema.Literal(true), updated: Schema.Number }),
      // The handler reads the body itself (its signature covers the raw bytes): still under the body limit.
      error: [ApiPayloadTooLarge, ApiServiceUnavailable]
    }).annotateMerge(
      doc(
        "GitHub App webhooks",
        "Point the app's webhook here (content type JSON, secret SVC_GITHUB_WEBHOOK_SECRET). `installation` (deleted, suspend, " +
          "unsuspend) and `installation_repositories` (added, removed) update the bound connections; other events are acknowledged. " +
          "A signature that does not match is 400 `webhook_signature_invalid`."
      )
    )
  )
  .annotate(
    OpenApi.Description,
    "GitHub's calls back to the service: the installation callback and the app's webhooks (no API key)."
  )
