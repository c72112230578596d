/** The whole HTTP API: every group, with authentication and the error envelope. */
import { HttpApi, OpenApi } from "effect/http-api"
import { AgentsApi } from "./AgentsApi.ts"
import { ApiKeysApi } from "./ApiKeysApi.ts"
import { ApiFailures, Authentication } from "./ApiMiddleware.ts"
import { BandsApi } from "./BandsApi.ts"
import { BrowserProfilesApi } from "./BrowserProfilesApi.ts"
import { CodehostApi, CodehostCallbacksApi } from "./CodehostApi.ts"
import { EnvironmentRunnersApi, EnvironmentsApi } from "./EnvironmentsApi.ts"
import { ArtifactLinksApi, ArtifactsApi, FilesApi } from "./FilesApi.ts"
import { HooksApi, ResultHandlersApi } from "./HooksApi.ts"
import { InteractionsApi } from "./InteractionsApi.ts"
import { RunsApi } from "./RunsApi.ts"
import { SecretContextsApi, SecretsApi } from "./SecretsApi.ts"
import { ThreadsApi } from "./ThreadsApi.ts"
import { HttpConnectionsApi, ToolServersApi } from "./ToolsApi.ts"
import { WorkspaceFilesApi } from "./WorkspaceFilesApi.ts"

export const Api = HttpApi.make("agent-service")
  .add(AgentsApi)
  .add(ThreadsApi)
  .add(WorkspaceFilesApi)
  .add(BandsApi)
  .add(SecretsApi)
  .add(SecretContextsApi)
  .add(HooksApi)
  .add(ResultHandlersApi)
  .add(ToolServersApi)
  .add(HttpConnectionsApi)
  .add(CodehostApi)
  .add(RunsApi)
  .add(InteractionsApi)
  .add(FilesApi)
  .add(ArtifactsApi)
  .add(ApiKeysApi)
  .add(EnvironmentsApi)
  .add(BrowserProfilesApi)
  // API middleware attaches to the endpoints added before it: keep these last.
  .middleware(Authentication)
  // Signed artifact URLs carry their grant, not an API key.
  .add(ArtifactLinksApi)
  // GitHub's installation callback (the signed state) and webhooks (their signature).
  .add(CodehostCallbacksApi)
  // Runners of environments: the environment's token, not an API key.
  .add(EnvironmentRunnersApi)
  .middleware(ApiFailures)
  .annotate(HttpApi.PayloadParseOptions, { errors: "all", onExcessProperty: "error" })
  .annotate(HttpApi.QueryParseOptions, { errors: "all", onExcessProperty: "error" })
  .annotate(OpenApi.Title, "Agent Service API")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(
    OpenApi.Description,
    "Agents, the threads people talk to them in, and the runs each message starts, streamed as they happen; the tools runs may call " +
      "and the approvals and questions that wait for a person. Every request sends `Authorization: Bearer <api key>`, and every " +
      "resource belongs to the workspace of the key that created it (another workspace's id is 403, an unknown one 404). " +
      "Every error is `{ \"error\": { \"type\", \"code\", \"message\", \"request_id\", \"details\"? } }`; each operation lists " +
      "the statuses it answers with, and any request may also meet 500 `internal_error` (with a `reference`) or, while the service " +
      "starts or stops, 503 `service_unavailable` with `Retry-After`. Lists are pages " +
      "(`limit` 1-100, then `cursor` = the previous page's `nextCursor`)."
  )
