/**
 * A thread's history (`GET /v1/threads/:id/messages`, the AI SDK's
 * UIMessages) in the console's terms: the turns (each run's user message and
 * assistant message), the assistant's parts as the stream chunks they were
 * folded from (so a stored turn is drawn by the same RunView as a live one),
 * and the files the conversation holds (attachments, artifacts in tool outputs).
 */
import { isRecord } from "./paths.js"

/** @typedef {import("../api.js").ThreadMessage} ThreadMessage */
/** @typedef {import("../api.js").MessagePart} MessagePart */
/** @typedef {import("../../domain/Chunk.ts").Chunk} Chunk */
/** @typedef {{ runId: string, user: ThreadMessage | undefined, assistant: ThreadMessage | undefined }} Turn */
/** @typedef {{ name: string, mediaType: string | undefined, path: string, runId: string }} FileRef */

/**
 * The messages grouped by run, oldest first.
 * @param {ReadonlyArray<ThreadMessage>} messages
 * @returns {Array<Turn>}
 */
export const turnsOf = (messages) => {
  /** @type {Map<string, Turn>} */
  const turns = new Map()
  for (const message of messages) {
    const runId = message.metadata.runId
    const turn = turns.get(runId) ?? { runId, user: undefined, assistant: undefined }
    turn[message.role] = message
    turns.set(runId, turn)
  }
  return [...turns.values()]
}

/**
 * A value in its wire form, read back as a chunk (the same parse the stream reader does).
 * @param {unknown} value
 * @returns {Chunk}
 */
const asChunk = (value) => JSON.parse(JSON.stringify(value))

/**
 * The chunks an assistant message was folded from, in order.
 * @param {ReadonlyArray<MessagePart>} parts
 * @returns {Array<Chunk>}
 */
export const chunksOf = (parts) =>
  parts.flatMap((part, i) => {
    const id = `h${i}`
    if (part.type === "step-start") return [asChunk({ type: "start-step" })]
    if (part.type === "text" && "text" in part) {
      return [asChunk({ type: "text-start", id }), asChunk({ type: "text-delta", id, delta: part.text })]
    }
    if (part.type === "reasoning" && "text" in part) {
      return [asChunk({ type: "reasoning-start", id }), asChunk({ type: "reasoning-delta", id, delta: part.text })]
    }
    if (part.type.startsWith("tool-") && "toolCallId" in part) {
      const toolName = part.type.slice("tool-".length)
      const { toolCallId } = part
      const input = "input" in part ? part.input : undefined
      /** @type {Array<Chunk>} */
      const chunks = [asChunk({ type: "tool-input-available", toolCallId, toolName, input: input ?? {} })]
      if ("output" in part) chunks.push(asChunk({ type: "tool-output-available", toolCallId, output: part.output }))
      if ("errorText" in part) {
        chunks.push(asChunk({ type: "tool-output-error", toolCallId, errorText: part.errorText }))
      }
      if ("approval" in part) {
        const reason = part.approval.reason
        if (reason !== undefined) {
          chunks.push(asChunk({ type: "data-svc-tool-denied", data: { toolCallId, toolName, reason } }))
        }
        chunks.push(asChunk({ type: "tool-output-denied", toolCallId }))
      }
      return chunks
    }
    if (part.type.startsWith("data-") && "data" in part) return [asChunk({ type: part.type, data: part.data })]
    return []
  })

/**
 * The service path of a URL the service made (`…/v1/artifacts/art_…`), so it is fetched from this origin.
 * @param {string} url
 */
const pathOf = (url) => {
  try {
    return new URL(url, location.origin).pathname
  } catch {
    return url
  }
}

/**
 * Artifact ids in a tool's output (`svcArtifactId`, `artifactId`, or an `id` that is one), with a name near them.
 * @param {unknown} value
 * @param {string} runId
 * @param {Array<FileRef>} found
 */
const artifactsIn = (value, runId, found) => {
  if (Array.isArray(value)) return value.forEach((v) => artifactsIn(v, runId, found))
  if (!isRecord(value)) return
  for (const key of ["svcArtifactId", "artifactId", "id"]) {
    const id = value[key]
    if (typeof id === "string" && id.startsWith("art_") && !found.some((f) => f.path.endsWith(id))) {
      const name = [value["filename"], value["name"], value["path"]].find((n) => typeof n === "string")
      const mediaType = typeof value["mediaType"] === "string" ? value["mediaType"] : undefined
      found.push({ name: typeof name === "string" ? name : id, mediaType, path: `/v1/artifacts/${id}`, runId })
    }
  }
  for (const inner of Object.values(value)) artifactsIn(inner, runId, found)
}

/**
 * The files of a conversation: attachments and file parts, then artifacts named in tool outputs.
 * @param {ReadonlyArray<ThreadMessage>} messages
 * @returns {Array<FileRef>}
 */
export const filesOf = (messages) => {
  /** @type {Array<FileRef>} */
  const found = []
  for (const message of messages) {
    const runId = message.metadata.runId
    for (const part of message.parts) {
      if (part.type === "file" && "url" in part && "mediaType" in part) {
        found.push({ name: part.filename ?? part.url, mediaType: part.mediaType, path: pathOf(part.url), runId })
      } else if ("output" in part) artifactsIn(part.output, runId, found)
    }
  }
  return found
}
