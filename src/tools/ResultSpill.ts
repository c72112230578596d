/**
 * Oversized tool results kept whole (spec 4.6 rule 5): when the run has a
 * family that can keep files (the managed workspace's `spill`), a result
 * over its tool's cap is written there whole, as `<tool call id>.json` (a
 * JSON result, laid out one value per line so read_file pages it and grep
 * finds lines) or `<tool call id>.txt`, and the model reads the cut-down
 * preview plus a hint naming the file and the file tools. If it cannot be
 * kept (the workspace's disk limit), the model and the overflow chunk are
 * told so and the preview is all there is.
 */
import { Effect, Option, Schema } from "effect"
import type { SpillFailed } from "./ToolFamily.ts"
import type { ToolOutcome } from "./ToolOutcome.ts"

export const isJson = (text: string) =>
  Option.isSome(Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Unknown))(text))

/**
 * Valid JSON text laid out with one value per line, two spaces per level. Works on the
 * text itself, so every literal (a number beyond double precision, an escape) stays as it was.
 */
export const layOut = (json: string): string => {
  const out: Array<string> = []
  let depth = 0
  let inString = false
  let escaped = false
  const newline = () => `\n${"  ".repeat(depth)}`
  for (let i = 0; i < json.length; i++) {
    const c = json[i]
    if (inString) {
      out.push(c)
      if (escaped) escaped = false
      else if (c === "\\") escaped = true
      else if (c === "\"") inString = false
      continue
    }
    switch (c) {
      case "\"":
        inString = true
        out.push(c)
        break
      case "{":
      case "[": {
        let next = i + 1
        while (next < json.length && " \t\r\n".includes(json[next])) next++
        if (json[next] === (c === "{" ? "}" : "]")) {
          // An empty object or array stays on its line.
          out.push(c, json[next])
          i = next
        } else {
          depth++
          out.push(c, newline())
        }
        break
      }
      case "}":
      case "]":
        depth--
        out.push(newline(), c)
        break
      case ",":
        out.push(",", newline())
        break
      case ":":
        out.push(": ")
        break
      case " ":
      case "\t":
      case "\r":
      case "\n":
        break
      default:
        out.push(c)
    }
  }
  return `${out.join("")}\n`
}

/** The file a call's whole result is kept in, and its content. */
export const fileOf = (toolCallId: string, full: string): { readonly name: string; readonly content: string } => {
  const base = toolCallId.replace(/[^A-Za-z0-9_-]/g, "_")
  return isJson(full) ? { name: `${base}.json`, content: layOut(full) } : { name: `${base}.txt`, content: full }
}

/** `note` after what the model reads (outside the untrusted envelope: it comes from the service). */
export const withNote = (outcome: ToolOutcome, note: string): ToolOutcome => ({
  ...outcome,
  text: `${outcome.text}\n${note}`,
  ...(outcome.modelText === undefined ? {} : { modelText: `${outcome.modelText}\n${note}` })
})

export type Spill = (name: string, content: string) => Effect.Effect<string, SpillFailed>

/** Keeps an over-cap result whole through `spill`; the outcome says where (`overflow.recovery`) and the model is told. */
export const recover = (outcome: ToolOutcome, toolCallId: string, spill: Spill): Effect.Effect<ToolOutcome> => {
  const overflow = outcome.overflow
  if (overflow === undefined) return Effect.succeed(outcome)
  const file = fileOf(toolCallId, overflow.full)
  return spill(file.name, file.content).pipe(
    Effect.map((path) =>
      withNote(
        { ...outcome, overflow: { ...overflow, recovery: { kind: "workspace", path } } },
        `[The full result (${overflow.bytes} bytes${
          file.name.endsWith(".json") ? ", JSON laid out one value per line" : ""
        }) is in the workspace at ${path}; ` +
          "read it with read_file (offset and limit page through it), grep or glob.]"
      )
    ),
    Effect.catch((e) => {
      const message = `the full result could not be kept in the workspace: ${e.message}`
      return Effect.succeed(
        withNote(
          { ...outcome, overflow: { ...overflow, recovery: { kind: "none", message } } },
          `[Only this preview is available: ${message}.]`
        )
      )
    })
  )
}
