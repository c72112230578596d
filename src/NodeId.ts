/**
 * This process's id (`node_...`), minted once at start: the executor it
 * writes on the runs it executes (NodeRepo), the `node_id` of its log lines
 * and the `service.instance.id` of its telemetry.
 */
import { Context, Layer } from "effect"
import { IdGenerator } from "./IdGenerator.ts"

export class NodeId extends Context.Service<NodeId, string>()("svc/NodeId") {
  static readonly layer = Layer.effect(NodeId)(IdGenerator.use((ids) => ids.make("node")))
}
