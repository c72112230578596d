/**
 * Contract of environments (issue 31): the resource users manage with their
 * API key, and the two routes runners use with the environment's token
 * (docs/guide/remote-workspaces.md): a long poll that hands a runner the next
 * call of its environment, and the POST of a call's result.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Environment, EnvironmentCreate, EnvironmentPatch, EnvironmentWithToken } from "../domain/Environment.ts"
import { ClientId } from "../domain/Ids.ts"
import { Deleted, Page, PageQuery } from "../domain/Page.ts"
import { doc, docWithBody } from "./ApiDocs.ts"
import {
  ApiConflict,
  ApiForbidden,
  ApiNotFound,
  ApiPayloadTooLarge,
  ApiServiceUnavailable,
  ApiUnauthorized
} from "./ErrorEnvelope.ts"
import { IdempotencyHeaders } from "./Headers.ts"

const params = { id: ClientId.environment }

export const EnvironmentsApi = HttpApiGroup.make("environments")
  .add(
    HttpApiEndpoint.get("list", "/v1/environments", { query: PageQuery, success: Page(Environment) }).annotateMerge(
      doc("List environments", "The workspace's environments, newest first, with their status. Tokens are never shown.")
    )
  )
  .add(
    HttpApiEndpoint.post("create", "/v1/environments", {
      payload: EnvironmentCreate,
      headers: IdempotencyHeaders,
      success: EnvironmentWithToken,
      error: [ApiConflict, ApiPayloadTooLarge, ApiServiceUnavailable]
    }).annotateMerge(
      docWithBody(
        "Create an environment",
        "A place where remote workspaces run: machines you run `agent-service environment run` on dial out to the service " +
          "with the `token` answered here (shown once, stored hashed; a retry with the same `Idempotency-Key` answers it again, " +
          "from a record that keeps it sealed under the master key). Agents use it through " +
          "`workspace: { type: 'remote', environmentId }`.",
        EnvironmentCreate,
        { name: "build-box", metadata: { team: "platform" } }
      )
    )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/environments/:id", {
      params,
      success: Environment,
      error: [ApiForbidden, ApiNotFound]
    }).annotateMerge(
      doc(
        "Get an environment",
        "Its status: `connected` while at least one runner is connected, with each runner's host name, version and last heartbeat."
      )
    )
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/environments/:id", {
      params,
      payload: EnvironmentPatch,
      success: Environment,
      error: [ApiForbidden, ApiNotFound, ApiConflict, ApiPayloadTooLarge]
    }).annotateMerge(
      docWithBody("Update an environment", "Renames it or merges metadata (null deletes a key).", EnvironmentPatch, {
        name: "build-box-2"
      })
    )
  )
  .add(
    HttpApiEndpoint.delete("delete", "/v1/environments/:id", {
      params,
      success: Deleted("environment"),
      error: [ApiForbidden, ApiNotFound, ApiConflict]
    }).annotateMerge(
      doc(
        "Delete an environment",
        "Deletes it unless agents use it: then 409 `resource_in_use` with `details.inUseByAgentIds`."
      )
    )
  )
  .add(
    HttpApiEndpoint.post("rotateToken", "/v1/environments/:id/rotate-token", {
      params,
      headers: IdempotencyHeaders,
      success: EnvironmentWithToken,
      error: [ApiForbidden, ApiNotFound, ApiConflict, ApiServiceUnavailable]
    }).annotateMerge(
      doc(
        "Rotate an environment's token",
        "Answers a new `token` (shown once). The old one stops working at once: runners using it are disconnected. " +
          "A retry with the same `Idempotency-Key` answers the same token and rotates nothing."
      )
    )
  )
  .annotate(OpenApi.Description, "Environments: machines of yours where remote workspaces' tools run.")

/** What a runner says of itself on each poll. */
export const RunnerHello = Schema.Struct({
  runnerId: Schema.String.check(
    Schema.isPattern(/^[0-9A-Za-z_-]{8,64}$/, { message: "runnerId: 8-64 of [0-9A-Za-z_-]" })
  ),
  hostName: Schema.String.check(Schema.isMaxLength(255)),
  version: Schema.String.check(Schema.isMaxLength(64))
}).annotate({ identifier: "EnvironmentRunnerHello" })

export const RunnerCall = Schema.Struct({ id: Schema.String, tool: Schema.String, input: Schema.Unknown })
export const RunnerPoll = Schema.Struct({ call: Schema.NullOr(RunnerCall) }).annotate({
  identifier: "EnvironmentRunnerPoll"
})

/** A call's result as the workspace tool answered it on the runner. */
export const RunnerOutcome = Schema.Struct({
  runnerId: Schema.String,
  output: Schema.Unknown,
  text: Schema.String,
  isError: Schema.Boolean
}).annotate({ identifier: "EnvironmentRunnerOutcome" })

const RunnerAuth = { authorization: Schema.String }

export const EnvironmentRunnersApi = HttpApiGroup.make("environmentRunners")
  .add(
    HttpApiEndpoint.post("poll", "/v1/environments/connect", {
      headers: RunnerAuth,
      payload: RunnerHello,
      success: RunnerPoll,
      error: [ApiUnauthorized, ApiPayloadTooLarge]
    }).annotateMerge(
      docWithBody(
        "Poll for an environment's next call (runners)",
        "Sent by `agent-service environment run` with `Authorization: Bearer <environment token>`: records the runner as " +
          "connected (its heartbeat) and answers the next tool call of the environment as soon as there is one, or " +
          "`{ call: null }` after 20 s.",
        RunnerHello,
        { runnerId: "runner_7Kd2LmQ9", hostName: "build-box-1", version: "1.0.0" }
      )
    )
  )
  .add(
    HttpApiEndpoint.post("result", "/v1/environments/calls/:callId/result", {
      headers: RunnerAuth,
      params: { callId: Schema.String },
      payload: RunnerOutcome,
      success: Schema.Struct({ accepted: Schema.Boolean }),
      error: [ApiUnauthorized, ApiPayloadTooLarge]
    }).annotateMerge(
      docWithBody(
        "Answer a call (runners)",
        "The result of a call the runner took. `accepted: false`: the call is no longer this runner's (it was given up).",
        RunnerOutcome,
        {
          runnerId: "runner_7Kd2LmQ9",
          output: { path: "README.md", content: "# Hello" },
          text: "1\t# Hello",
          isError: false
        }
      )
    )
  )
  .annotate(OpenApi.Description, "The routes runners of environments use, with the environment's token.")
