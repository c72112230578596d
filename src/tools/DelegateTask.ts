/**
 * The built-in `delegate_task` tool (capabilities.subagents): what the model
 * is offered; its input is read with ToolDef.decode. The step loop runs it (a
 * worker run per call, src/runs/Delegation.ts), not a tool family: its result
 * arrives when the worker ends.
 */
import { DelegateTaskInput, DelegateTaskName } from "../../domain/Worker.ts"
import * as ToolDef from "./ToolDef.ts"

export const delegateTask = ToolDef.declare({
  name: DelegateTaskName,
  description:
    "Delegate a self-contained task to a worker that carries it out on its own and returns its final answer. Several calls in one step run at the same time. " +
    "The prompt is all the worker is told besides your context: include everything it needs. role 'worker' (default) works with your tools; " +
    "'advisor' has no tools and only answers. outputSchema (a JSON Schema) makes the worker answer with JSON satisfying it.",
  input: DelegateTaskInput
})
