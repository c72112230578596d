/**
 * This process's id (`node_...`), minted once at start: the executor it
 * writes on the runs it executes (NodeRepo), the `node_id` of its log lines
 * and the `service.instance.id` of its telemetry.
 */
import { Context, Effect, Layer } from "effect"
import { IdGenerator } from "./IdGenerator.ts"

export class NodeId extends Context.Service<NodeId, string>()("svc/NodeId") {
  static readonly layer = Layer.effect(NodeId)(IdGenerator.use((ids) => ids.make("node")))
}

/** The node id when this process has one (the supervisor of SVC_PROCESSES workers has none). */
export const currentNodeId: Effect.Effect<string | undefined> = Effect.map(Effect.serviceOption(NodeId), (id) =>
  id._tag === "Some" ? id.value : undefined)
