/** Contract of the agents routes (spec 4.1), with what the reference page says of each. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Agent, AgentCreate, AgentPatch } from "../domain/Agent.ts"
import { ClientId } from "../domain/Ids.ts"
import { Deleted, Page, PageQuery } from "../domain/Page.ts"
import { doc, docWithBody, ExampleIds } from "./ApiDocs.ts"
import { ApiConflict, ApiForbidden, ApiNotFound, ApiPayloadTooLarge, ApiServiceUnavailable } from "./ErrorEnvelope.ts"
import { IdempotencyHeaders } from "./Headers.ts"

const params = { id: ClientId.agent }

const agentExample: typeof AgentCreate.Encoded = {
  context: "You are the support assistant of Acme. Answer briefly and cite the ticket you used.",
  band: "core",
  capabilities: { userInteraction: true, mcp: { toolServerIds: [ExampleIds.toolServer] } },
  policies: { maxStepsDefault: 20 },
  metadata: { team: "support" }
}

export const AgentsApi = HttpApiGroup.make("agents")
  .add(
    HttpApiEndpoint.get("list", "/v1/agents", { query: PageQuery, success: Page(Agent) }).annotateMerge(
      doc(
        "List agents",
        "The agents of your workspace, newest first, a page at a time (`limit`, then `cursor` = the previous page's `nextCursor`)."
      )
    )
  )
  .add(
    HttpApiEndpoint.post("create", "/v1/agents", {
      payload: AgentCreate,
      headers: IdempotencyHeaders,
      success: Agent,
      error: [ApiConflict, ApiForbidden, ApiPayloadTooLarge, ApiServiceUnavailable]
    })
      .annotateMerge(
        docWithBody(
          "Create an agent",
          "Saves a reusable agent: its context blocks, band, capabilities (MCP tool servers, HTTP connections, skills, questions to a person), " +
            "an optional managed workspace, approval settings and default limits. The answer shows every field resolved to its effective value. " +
            "A setting this deployment cannot honour is refused with a `*_unconfigured` code rather than stored and ignored. " +
            "Send `Idempotency-Key` to make a retry return the first answer.",
          AgentCreate,
          agentExample
        )
      )
  )
  .add(
    HttpApiEndpoint.post("validate", "/v1/agents/validate", {
      payload: AgentCreate,
      success: Schema.Struct({ valid: Schema.Literal(true) }),
      error: [ApiForbidden, ApiPayloadTooLarge]
    }).annotateMerge(
      docWithBody(
        "Check an agent configuration without saving it",
        "Runs every check that creating the agent would (field rules, the tool servers, connections, hooks and secret contexts it names, " +
          "the workspace seed URL) and stores nothing: `{ \"valid\": true }`, or the 400 that create would answer.",
        AgentCreate,
        agentExample
      )
    )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/agents/:id", { params, success: Agent, error: [ApiForbidden, ApiNotFound] })
      .annotateMerge(
        doc("Get an agent", "One agent with every field resolved to its effective value and its `configVersion`.")
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/agents/:id", {
      params,
      payload: AgentPatch,
      success: Agent,
      error: [ApiForbidden, ApiNotFound, ApiPayloadTooLarge]
    }).annotateMerge(
      docWithBody(
        "Update an agent",
        "Changes only the fields sent. `capabilities` and `workspace` replace what was there; `metadata` merges key by key (`null` removes a key); " +
          "`policies: null` and `artifacts: null` restore the defaults. `configVersion` grows only when the configuration really changed. " +
          "Runs already started keep the configuration they began with; the next run sees the change.",
        AgentPatch,
        { band: "frontier", metadata: { tier: "gold", team: null } }
      )
    )
  )
  .add(
    HttpApiEndpoint.delete("delete", "/v1/agents/:id", {
      params,
      success: Deleted("agent"),
      error: [ApiForbidden, ApiNotFound]
    }).annotateMerge(
      doc(
        "Delete an agent",
        "Cancels the active runs of the agent's threads, then deletes the agent together with its threads."
      )
    )
  )
  .annotate(
    OpenApi.Description,
    "Agents: saved configurations (context, band, tools, workspace, approvals, limits) that threads talk to."
  )
