/** Handlers of the agents routes. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Agent } from "../domain/Agent.ts"
import { Agents } from "../src/agents/Agents.ts"
import { Runs } from "../src/runs/Runs.ts"
import { Api } from "./Api.ts"
import { authed } from "./ApiMiddleware.ts"
import { idempotent } from "./Idempotent.ts"

export const AgentsHandlers = HttpApiBuilder.group(Api, "agents", (handlers) =>
  Effect.gen(function*() {
    const agents = yield* Agents
    const runs = yield* Runs
    return handlers
      .handle("list", ({ query }) => authed((p) => agents.list(p, query)))
      .handle("create", (route) => authed(idempotent(route, Agent, (p) => agents.create(p, route.payload))))
      .handle("validate", ({ payload }) => authed((p) => agents.validate(p, payload)))
      .handle("get", ({ params }) => authed((p) => agents.get(p, params.id)))
      .handle("update", ({ params, payload }) => authed((p) => agents.update(p, params.id, payload)))
      .handle("delete", ({ params }) =>
        authed((p) =>
          // Active runs of its threads are cancelled first; the threads then go with the agent.
          Effect.andThen(runs.cancelAgentRuns(p, params.id), agents.remove(p, params.id))
        ))
  }))
