/** Contract of interactions (spec 4.4), with what the reference page says of each. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { ClientId } from "../domain/Ids.ts"
import {
  BatchResolveBody,
  BatchResolveResult,
  Interaction,
  InteractionKind,
  InteractionStatus,
  ResolveInteractionBody
} from "../domain/Interaction.ts"
import { Page, PageQuery } from "../domain/Page.ts"
import { doc, docWithBody, ExampleIds } from "./ApiDocs.ts"
import { ApiConflict, ApiForbidden, ApiNotFound, ApiPayloadTooLarge, ApiServiceUnavailable } from "./ErrorEnvelope.ts"
import { IdempotencyHeaders } from "./Headers.ts"

export const InteractionsApi = HttpApiGroup.make("interactions")
  .add(
    HttpApiEndpoint.get("list", "/v1/interactions", {
      query: {
        ...PageQuery,
        runId: Schema.optionalKey(ClientId.run),
        rootRunId: Schema.optionalKey(ClientId.run),
        status: Schema.optionalKey(InteractionStatus),
        kind: Schema.optionalKey(InteractionKind)
      },
      success: Page(Interaction)
    }).annotateMerge(
      doc(
        "List interactions",
        "Approval requests and questions of the workspace's runs, newest first, a page at a time; narrow by `runId`, `rootRunId`, " +
          "`status` (`pending` for an inbox) or `kind`. Calls an approval hook reviewed are listed too: one it decided at once " +
          "(allow, deny, or `onHookError`) as already settled, with `resolution.resolvedBy`."
      )
    )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/interactions/:id", {
      params: { id: ClientId.interaction },
      success: Interaction,
      error: [ApiForbidden, ApiNotFound]
    })
      .annotateMerge(
        doc(
          "Get an interaction",
          "What a parked run waits for: a tool call to approve (with its input and a preview) or questions to answer, " +
            "with its status, its expiry and, once settled, its resolution. The `id` of an approval hook's review request is one: " +
            "a review the hook decided at once is recorded settled (`decision` and `reason` the hook's, " +
            "`resolution: { resolvedBy: \"hook\" }`, or `resolvedBy: \"onHookError\"` with the failure when the hook failed)."
        )
      )
  )
  .add(
    HttpApiEndpoint.post("resolve", "/v1/interactions/:id/resolve", {
      headers: IdempotencyHeaders,
      params: { id: ClientId.interaction },
      payload: ResolveInteractionBody,
      success: Interaction,
      error: [ApiForbidden, ApiNotFound, ApiConflict, ApiPayloadTooLarge, ApiServiceUnavailable]
    }).annotateMerge(
      docWithBody(
        "Answer an interaction",
        "Approves or denies a tool call (`optionId` `approve` or `deny`, `requestId` the interaction's id), answers a question " +
          "(`requestId` a question's or an action's id), or abandons it with `cancel: true` (an abandoned approval counts as denied). " +
          "The run resumes once every interaction of its step is settled. Sending the same answer again is 200; a different one is 409. " +
          "After the run ended the answer is only recorded.",
        ResolveInteractionBody,
        {
          inputResponses: [{ requestId: ExampleIds.interaction, optionId: "approve" }],
          reason: "Read-only query, fine to run."
        }
      )
    )
  )
  .add(
    HttpApiEndpoint.post("resolveBatch", "/v1/runs/:rootRunId/interactions/resolve", {
      headers: IdempotencyHeaders,
      params: { rootRunId: ClientId.run },
      payload: BatchResolveBody,
      success: BatchResolveResult,
      error: [ApiForbidden, ApiNotFound, ApiPayloadTooLarge, ApiConflict, ApiServiceUnavailable]
    }).annotateMerge(
      docWithBody(
        "Answer several interactions of a run",
        "Up to 20 interactions of one root run in one request, each answered as by the single resolve and independently of the others: " +
          "every item reports `resolved`, `already_resolved`, `conflict`, `not_found` or `invalid_body`. " +
          "Interactions left unanswered keep the run parked.",
        BatchResolveBody,
        {
          items: [
            {
              id: ExampleIds.interaction,
              inputResponses: [{ requestId: ExampleIds.interaction, optionId: "approve" }]
            },
            { id: ExampleIds.interaction2, cancel: true, reason: "Not needed any more." }
          ]
        }
      )
    )
  )
  .annotate(
    OpenApi.Description,
    "Interactions: the approvals and questions a parked run waits on, and how a person answers them."
  )
