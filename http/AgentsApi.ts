/** Contract of the agents routes (spec 4.1). */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Agent, AgentCreate, AgentPatch } from "../domain/Agent.ts"
import { ClientId } from "../domain/Ids.ts"
import { Deleted, Page, PageQuery } from "../domain/Page.ts"
import { IdempotencyHeaders } from "./Headers.ts"

const params = { id: ClientId.agent }

export const AgentsApi = HttpApiGroup.make("agents")
  .add(HttpApiEndpoint.get("list", "/v1/agents", { query: PageQuery, success: Page(Agent) }))
  .add(HttpApiEndpoint.post("create", "/v1/agents", { payload: AgentCreate, headers: IdempotencyHeaders, success: Agent }))
  .add(
    HttpApiEndpoint.post("validate", "/v1/agents/validate", {
      payload: AgentCreate,
      success: Schema.Struct({ valid: Schema.Literal(true) })
    })
  )
  .add(HttpApiEndpoint.get("get", "/v1/agents/:id", { params, success: Agent }))
  .add(HttpApiEndpoint.patch("update", "/v1/agents/:id", { params, payload: AgentPatch, success: Agent }))
  .add(HttpApiEndpoint.delete("delete", "/v1/agents/:id", { params, success: Deleted("agent") }))
