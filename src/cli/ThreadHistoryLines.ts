/**
 * A thread's messages in the lines `send` and `runs tail` print while a run
 * streams: each turn's run id, the user's files and text, then what the
 * agent thought, called and answered.
 */
import type { ThreadMessage } from "agent-service/client"
import { Schema } from "effect"
import { ToolFailureOutput } from "../../domain/Chunk.ts"
import { brief } from "./RunView.ts"

const isToolFailure = Schema.is(ToolFailureOutput)
const FollowupData = Schema.Struct({ text: Schema.String })
const decodeFollowup = Schema.decodeUnknownOption(FollowupData)

type Part = ThreadMessage["parts"][number]

/** A part's lines; text parts are the answer as it was streamed. */
const partLines = (part: Part): ReadonlyArray<string> => {
  switch (part.type) {
    case "text":
      return [part.text]
    case "reasoning":
      return [`[thinking] ${part.text}`]
    case "file":
      return [`[file] ${part.filename ?? ""} ${part.mediaType} ${part.url}`]
    case "step-start":
      return []
  }
  if (part.type.startsWith("data-")) {
    if (part.type !== "data-svc-followup-replayed" || !("data" in part)) return []
    const held = decodeFollowup(part.data)
    return held._tag === "Some" ? [`[follow-up] ${held.value.text}`] : []
  }
  if (!("toolCallId" in part)) return []
  const name = part.type.slice("tool-".length)
  const call = "input" in part ? [`[tool] ${name} ${brief(part.input)}`] : [`[tool] ${name}`]
  switch (part.state) {
    case "output-available":
      return [
        ...call,
        isToolFailure(part.output)
          ? `[tool error] ${name}: ${part.output.error.code}: ${part.output.error.message}`
          : `[result] ${name} ${brief(part.output)}`
      ]
    case "output-error":
      return [...call, `[tool error] ${name}: ${part.errorText}`]
    case "output-denied":
      return [...call, `[denied] ${name}${part.approval.reason === undefined ? "" : `: ${part.approval.reason}`}`]
    default:
      return [...call, `[running] ${name}`]
  }
}

/** A message's lines: the user's opens its turn with the run's id. */
export const messageLines = (message: ThreadMessage): ReadonlyArray<string> => [
  ...(message.role === "user" ? [`[turn] ${message.metadata.runId} ${message.metadata.createdAt}`] : []),
  ...message.parts.flatMap((part) =>
    message.role === "user" && part.type === "text" ? [`[user] ${part.text}`] : partLines(part)
  )
]
