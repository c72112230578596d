/**
 * Durable context: a string or an array of blocks, always stored as blocks.
 * Caps: at most 100 blocks, 32,768 characters per block, 131,072 in all;
 * block ids (optional) are 1-128 characters and unique.
 */
import { Schema } from "effect"
import { InvalidRequest } from "./Errors.ts"

export const ContextLimits = {
  maxBlocks: 100,
  maxBlockChars: 32_768,
  maxTotalChars: 131_072,
  maxIdLength: 128
} as const

export const ContextBlock = Schema.Struct({
  id: Schema.optionalKey(
    Schema.String.check(Schema.isBetweenLength(1, ContextLimits.maxIdLength))
  ),
  content: Schema.String
}).annotate({ identifier: "ContextBlock" })
export type ContextBlock = typeof ContextBlock.Type

export const ContextInput = Schema.Union([Schema.String, Schema.Array(ContextBlock)]).annotate({
  identifier: "ContextInput",
  description: "A string (one block) or an array of blocks. [] or \"\" clears the context."
})
export type ContextInput = typeof ContextInput.Type

/** Normalizes to blocks and enforces the caps; `field` names the body field in errors. */
export const normalizeContext = (
  input: ContextInput,
  field = "context"
): ReadonlyArray<ContextBlock> | InvalidRequest => {
  const blocks: ReadonlyArray<ContextBlock> = typeof input === "string"
    ? (input === "" ? [] : [{ content: input }])
    : input
  if (blocks.length > ContextLimits.maxBlocks) {
    return InvalidRequest.forField(
      field,
      `${field} has ${blocks.length} blocks; at most ${ContextLimits.maxBlocks} are allowed.`
    )
  }
  const seen = new Set<string>()
  let total = 0
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i]
    const at = typeof input === "string" ? field : `${field}[${i}]`
    if (block.content.length > ContextLimits.maxBlockChars) {
      return InvalidRequest.forField(
        at,
        `${at} is ${block.content.length} characters; a context block may have at most ${ContextLimits.maxBlockChars}.`
      )
    }
    if (block.id !== undefined) {
      if (seen.has(block.id)) return InvalidRequest.forField(`${at}.id`, `Duplicate context block id '${block.id}'.`)
      seen.add(block.id)
    }
    total += block.content.length
  }
  if (total > ContextLimits.maxTotalChars) {
    return InvalidRequest.forField(
      field,
      `${field} totals ${total} characters; the aggregate cap is ${ContextLimits.maxTotalChars}.`
    )
  }
  return blocks
}
