/**
 * The built-in `delegate_task` tool (capabilities.subagents): what the model
 * is offered and how its input is read. The step loop runs it (a worker run
 * per call, src/runs/Delegation.ts), not a tool family: its result arrives
 * when the worker ends.
 */
import { Schema } from "effect"
import type { ToolSpec } from "../../domain/Conversation.ts"
import { DelegateTaskInput, DelegateTaskName } from "../../domain/Worker.ts"

export const delegateTaskSpec: ToolSpec = {
  name: DelegateTaskName,
  description:
    "Delegate a self-contained task to a worker that carries it out on its own and returns its final answer. Several calls in one step run at the same time. " +
    "The prompt is all the worker is told besides your context: include everything it needs. role 'worker' (default) works with your tools; " +
    "'advisor' has no tools and only answers. outputSchema (a JSON Schema) makes the worker answer with JSON satisfying it.",
  inputSchema: {
    type: "object",
    properties: {
      label: { type: "string", description: "A short title for the task." },
      prompt: { type: "string", description: "The full instructions for the worker." },
      role: { type: "string", enum: ["worker", "advisor"] },
      outputSchema: { type: "object" }
    },
    required: ["label", "prompt"]
  }
}

const decode = Schema.decodeUnknownResult(DelegateTaskInput, { errors: "all", onExcessProperty: "error" })

/** The call's input, or what is wrong with it (a tool error the model reads). */
export const readInput = (
  input: unknown
): { readonly _tag: "Valid"; readonly value: DelegateTaskInput } | {
  readonly _tag: "Invalid"
  readonly message: string
} => {
  const result = decode(input)
  return result._tag === "Success"
    ? { _tag: "Valid", value: result.success }
    : {
      _tag: "Invalid",
      message:
        `Error: delegate_task needs { label, prompt, role?: 'worker' | 'advisor', outputSchema? }: ${result.failure.message}`
    }
}
