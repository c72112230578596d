/**
 * The parts of a thread's messages (domain/ThreadMessage.ts). The assistant's
 * are folded from the run's stored stream as the AI SDK's `useChat` folds the
 * live one (text, reasoning, step starts, tool calls, `data-svc-*` parts; a
 * `reset-step` drops the replayed step's parts), with a denied call's
 * `approval` added, which `validateUIMessages` requires. Once the stream is
 * deleted (SVC_EVENT_RETENTION_DAYS) they are rebuilt from the checkpointed
 * steps: what the model saw, so no reasoning nor data parts, tool results as
 * the model read them and denials as errors.
 */
import type { Chunk } from "../../domain/Chunk.ts"
import type { AttachmentRef, Message } from "../../domain/Conversation.ts"
import type { MessagePart, ToolPart } from "../../domain/ThreadMessage.ts"

/** Where an attachment's bytes are: the run's own copy, read with the API key. */
export const artifactUrl = (publicUrl: string, artifactId: string): string => `${publicUrl}/v1/artifacts/${artifactId}`

/** The user's message: its attachments as file parts, then its text, as `useChat` sends them. */
export const userParts = (
  input: string,
  attachments: ReadonlyArray<AttachmentRef>,
  publicUrl: string
): Array<MessagePart> => [
  ...attachments.map((a): MessagePart => ({
    type: "file",
    mediaType: a.mediaType,
    filename: a.filename,
    url: artifactUrl(publicUrl, a.artifactId)
  })),
  ...(input !== "" || attachments.length === 0 ? [{ type: "text" as const, text: input }] : [])
]

type DataChunk = Extract<Chunk, { readonly type: `data-${string}` }>

const isDataChunk = (chunk: Chunk): chunk is DataChunk => chunk.type.startsWith("data-")

const isTool = (part: MessagePart): part is ToolPart => part.type.startsWith("tool-")

/** The call's input (undefined while it still streams). */
const inputOf = (part: ToolPart): unknown => ("input" in part ? part.input : undefined)

/**
 * The assistant's parts folded from a run's stored chunks. `approvalOf`: the approval request of a
 * call (a denied call's approval id), when it had one.
 */
export const partsOfStream = (
  chunks: ReadonlyArray<Chunk>,
  approvalOf: (toolCallId: string) => string | undefined
): Array<MessagePart> => {
  const parts: Array<MessagePart> = []
  /** Open text and reasoning parts by stream part id: their index in `parts`. */
  const open = new Map<string, number>()
  /** Why a call was denied (`data-svc-tool-denied`, just before its `tool-output-denied`). */
  const reasons = new Map<string, string>()

  const edit = (id: string, f: (part: MessagePart) => MessagePart, close = false) => {
    const at = open.get(id)
    if (at === undefined) return
    parts[at] = f(parts[at])
    if (close) open.delete(id)
  }
  const appendText = (delta: string) => (part: MessagePart): MessagePart =>
    part.type === "text" || part.type === "reasoning" ? { ...part, text: part.text + delta } : part
  const done = (part: MessagePart): MessagePart =>
    part.type === "text" || part.type === "reasoning" ? { ...part, state: "done" } : part
  const tool = (toolCallId: string) => parts.findLastIndex((p) => isTool(p) && p.toolCallId === toolCallId)
  const settle = (toolCallId: string, f: (part: ToolPart) => ToolPart) => {
    const at = tool(toolCallId)
    const part = parts[at]
    if (part !== undefined && isTool(part)) parts[at] = f(part)
  }
  const upsertTool = (part: ToolPart) => {
    const at = tool(part.toolCallId)
    if (at === -1) parts.push(part)
    else parts[at] = part
  }

  for (const chunk of chunks) {
    switch (chunk.type) {
      case "start-step":
        parts.push({ type: "step-start" })
        break
      case "reset-step": {
        // The step the previous executor was streaming is replayed: its parts go, its start stays.
        parts.splice(parts.findLastIndex((p) => p.type === "step-start") + 1)
        open.clear()
        break
      }
      case "text-start":
        open.set(chunk.id, parts.push({ type: "text", text: "", state: "streaming" }) - 1)
        break
      case "reasoning-start":
        open.set(chunk.id, parts.push({ type: "reasoning", id: chunk.id, text: "", state: "streaming" }) - 1)
        break
      case "text-delta":
      case "reasoning-delta":
        edit(chunk.id, appendText(chunk.delta))
        break
      case "text-end":
      case "reasoning-end":
        edit(chunk.id, done, true)
        break
      case "tool-input-start":
        upsertTool({ type: `tool-${chunk.toolName}`, toolCallId: chunk.toolCallId, state: "input-streaming" })
        break
      case "tool-input-available":
        upsertTool({
          type: `tool-${chunk.toolName}`,
          toolCallId: chunk.toolCallId,
          state: "input-available",
          input: chunk.input
        })
        break
      case "tool-output-available":
        settle(
          chunk.toolCallId,
          (p) => ({ ...call(p), state: "output-available", input: inputOf(p), output: chunk.output })
        )
        break
      case "tool-output-error":
        settle(chunk.toolCallId, (p) => ({
          ...call(p),
          state: "output-error",
          ...("input" in p ? { input: p.input } : {}),
          errorText: chunk.errorText
        }))
        break
      case "tool-output-denied": {
        const reason = reasons.get(chunk.toolCallId)
        const approval = {
          id: approvalOf(chunk.toolCallId) ?? chunk.toolCallId,
          approved: false as const,
          ...(reason === undefined ? {} : { reason })
        }
        settle(chunk.toolCallId, (p) => ({ ...call(p), state: "output-denied", input: inputOf(p), approval }))
        break
      }
      default:
        if (!isDataChunk(chunk)) break
        if (chunk.type === "data-svc-tool-denied") reasons.set(chunk.data.toolCallId, chunk.data.reason)
        pushData(parts, chunk)
    }
  }
  return parts
}

/** What every state of a call's part has: its type (the tool's name) and its id. */
const call = (part: ToolPart) => ({ type: part.type, toolCallId: part.toolCallId })

/** A data part; one with the id and type of an earlier one replaces its data (as `useChat` does). */
const pushData = (parts: Array<MessagePart>, chunk: DataChunk) => {
  const { id } = chunk
  const at = id === undefined ? -1 : parts.findIndex((p) => p.type === chunk.type && "id" in p && p.id === id)
  const part: MessagePart = { type: chunk.type, ...(id === undefined ? {} : { id }), data: chunk.data }
  if (at === -1) parts.push(part)
  else parts[at] = part
}

/**
 * The assistant's parts rebuilt from a run's checkpointed steps (its stream is gone). A held
 * message the run delivered opens its step as the stream showed it (`data-svc-followup-replayed`).
 */
export const partsOfSteps = (
  steps: ReadonlyArray<ReadonlyArray<Message>>,
  followups: ReadonlyArray<{ readonly id: string; readonly text: string }>
): Array<MessagePart> => {
  const parts: Array<MessagePart> = []
  let delivered = 0
  for (const step of steps) {
    for (const m of step) {
      if (m.role !== "user") continue
      const held = followups[delivered++]
      parts.push({
        type: "data-svc-followup-replayed",
        data: held === undefined ? { text: m.content } : { followupId: held.id, text: m.content }
      })
    }
    parts.push({ type: "step-start" })
    const results = new Map(step.flatMap((m) => (m.role === "tool" ? [[m.toolCallId, m] as const] : [])))
    for (const m of step) {
      if (m.role !== "assistant") continue
      if (m.content !== "") parts.push({ type: "text", text: m.content, state: "done" })
      for (const c of m.toolCalls) {
        const result = results.get(c.id)
        const made = { type: `tool-${c.name}` as const, toolCallId: c.id, input: c.input }
        parts.push(
          result === undefined
            ? { ...made, state: "input-available" }
            : result.isError
            ? { ...made, state: "output-error", errorText: result.content }
            : { ...made, state: "output-available", output: result.content }
        )
      }
    }
  }
  return parts
}
