/** Handlers of the agents routes. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Agent } from "../domain/Agent.ts"
import { Idempotency } from "../src/access/Idempotency.ts"
import { Agents } from "../src/agents/Agents.ts"
import { Runs } from "../src/runs/Runs.ts"
import { Api } from "./Api.ts"
import { CurrentPrincipal } from "./ApiMiddleware.ts"
import { envelope } from "./ErrorEnvelope.ts"

export const AgentsHandlers = HttpApiBuilder.group(Api, "agents", (handlers) =>
  Effect.gen(function*() {
    const agents = yield* Agents
    const runs = yield* Runs
    const idempotency = yield* Idempotency
    return handlers
      .handle("list", ({ query }) => Effect.flatMap(CurrentPrincipal, (p) => agents.list(p, query)).pipe(envelope))
      .handle("create", ({ payload, headers }) =>
        Effect.flatMap(CurrentPrincipal, (p) =>
          idempotency.run(
            { principal: p, method: "POST", path: "/v1/agents", key: headers["idempotency-key"], body: payload },
            { schema: Agent, status: 200 },
            agents.create(p, payload)
          )).pipe(envelope))
      .handle("validate", ({ payload }) =>
        Effect.flatMap(CurrentPrincipal, (p) => agents.validate(p, payload)).pipe(envelope))
      .handle("get", ({ params }) =>
        Effect.flatMap(CurrentPrincipal, (p) => agents.get(p, params.id)).pipe(envelope))
      .handle("update", ({ params, payload }) =>
        Effect.flatMap(CurrentPrincipal, (p) =>
          agents.update(p, params.id, payload)).pipe(envelope))
      .handle("delete", ({ params }) =>
        Effect.flatMap(CurrentPrincipal, (p) =>
          // Active runs of its threads are cancelled first; the threads then go with the agent.
          Effect.andThen(runs.cancelAgentRuns(p, params.id), agents.remove(p, params.id))).pipe(envelope))
  }))
