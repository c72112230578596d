/**
 * A tool defined once: its name, description, input as an Effect Schema (the
 * JSON schema the model is offered is derived from it, field descriptions from
 * the schema's annotations), whether its result is untrusted (fenced for the
 * model) and its handler. The model's input is decoded here and nowhere else:
 * an invalid input is the failure `invalid_tool_input` naming the tool and the
 * issue. `family` makes a ToolFamily of definitions; a tool the run loop runs
 * itself (ask_question, delegate_task) is only `declare`d.
 */
import { Effect, Result, Schema, SchemaAST, SchemaIssue } from "effect"
import type { ToolSpec } from "../../domain/Conversation.ts"
import type { CallRef, ToolFamily } from "./ToolFamily.ts"
import * as ToolOutcome from "./ToolOutcome.ts"
import { envelope } from "./ToolResults.ts"

/** A schema a tool's input can have: decoded without services. */
export type Input = Schema.ConstraintDecoder<unknown>

/** What the model is offered of a tool, and how its input is read. */
export interface Declared<S extends Input> {
  readonly name: string
  readonly input: S
  /** The result carries text from outside (web pages, issue bodies, ...): the model reads it fenced as data. */
  readonly untrusted: boolean
  /** The name, description and the JSON schema derived from `input`. */
  readonly spec: ToolSpec
}

/** A tool ready to run in a context `Ctx`; its handler may fail with `E`, which its family turns into a failure. */
export interface ToolDef<in Ctx, out E = never> {
  readonly name: string
  readonly untrusted: boolean
  readonly spec: ToolSpec
  /** The model's input decoded: the call, ready to run, or the failure the model reads. */
  readonly prepare: (
    input: unknown
  ) => Result.Result<(ctx: Ctx) => Effect.Effect<ToolOutcome.ToolOutcome, E>, ToolOutcome.ToolOutcome>
}

export interface Config<S extends Input> {
  readonly name: string
  readonly description: string
  readonly input: S
  readonly untrusted?: boolean
}

const issues = SchemaIssue.makeFormatterStandardSchemaV1()

/** `Invalid input for <tool>: <path>: <problem>; ...` */
const invalid = (name: string, issue: SchemaIssue.Issue): ToolOutcome.ToolOutcome =>
  ToolOutcome.failure(
    "invalid_tool_input",
    `Invalid input for ${name}: ${
      issues(issue).issues.map((i) =>
        i.path === undefined || i.path.length === 0 ? i.message : `${i.path.map(String).join(".")}: ${i.message}`
      ).join("; ")
    }`
  )

/**
 * The JSON schema of `input`, as effect's `Tool.getJsonSchemaFromSchema` derives a tool's
 * parameters, closed to properties the schema does not name (the input is decoded the same way).
 */
export const inputSchemaOf = (input: Input): Readonly<Record<string, unknown>> => {
  const { definitions, schema } = Schema.toJsonSchemaDocument(input, { onExcessProperty: "error" })
  // A struct without fields is a JSON schema that is not an object; providers want tools to take one.
  const fieldless = SchemaAST.isObjects(input.ast) && input.ast.propertySignatures.length === 0 &&
    input.ast.indexSignatures.length === 0
  const base = fieldless ? { type: "object", properties: {}, additionalProperties: false } : schema
  return Object.keys(definitions).length > 0 ? { ...base, $defs: definitions } : base
}

/** A tool the run loop runs itself: what the model is offered and how its input is read. */
export const declare = <S extends Input>(config: Config<S>): Declared<S> => ({
  name: config.name,
  input: config.input,
  untrusted: config.untrusted ?? false,
  spec: { name: config.name, description: config.description, inputSchema: inputSchemaOf(config.input) }
})

/** Decodes a call's input with its tool's schema: the value, or the failure the model reads. */
export const decode = <S extends Input>(
  tool: Declared<S>,
  input: unknown
): Result.Result<S["Type"], ToolOutcome.ToolOutcome> =>
  Result.mapError(
    Schema.decodeUnknownResult(Schema.toCodecJson(tool.input))(input, { onExcessProperty: "error", errors: "all" }),
    (error) => invalid(tool.name, error.issue)
  )

/**
 * A tool. The handler answers a plain result (shown on the stream, the model reads its JSON)
 * or a ToolOutcome it built (its own text, an expected failure).
 */
export const make = <S extends Input, Ctx, A, E = never>(
  config: Config<S> & {
    readonly handler: (input: S["Type"], ctx: Ctx) => Effect.Effect<A | ToolOutcome.ToolOutcome, E>
  }
): ToolDef<Ctx, E> & Declared<S> => {
  const declared = declare(config)
  const outcomeOf = (result: A | ToolOutcome.ToolOutcome): ToolOutcome.ToolOutcome => {
    const outcome = ToolOutcome.isOutcome(result) ? result : ToolOutcome.success(result)
    return declared.untrusted && !outcome.isError
      ? { ...outcome, modelText: envelope(config.name, outcome.text) }
      : outcome
  }
  return {
    ...declared,
    prepare: (input) =>
      Result.map(
        decode(declared, input),
        (decoded) => (ctx: Ctx) => Effect.map(config.handler(decoded, ctx), outcomeOf)
      )
  }
}

/** What a family of definitions adds to them: the context of a call, and the ToolFamily's capabilities. */
export interface FamilyOptions<Ctx>
  extends Partial<Pick<ToolFamily, "policyOf" | "requiredSkillsOf" | "spill" | "files" | "git" | "instructions">>
{
  /** The context a call runs in, given the call's id and step. */
  readonly context: (call: CallRef) => Ctx
  /** Around each call whose input decoded (the code host journals its writes). */
  readonly around?: (
    name: string,
    call: CallRef,
    run: Effect.Effect<ToolOutcome.ToolOutcome>
  ) => Effect.Effect<ToolOutcome.ToolOutcome>
}

/** A handler's expected error as the failure the model reads. */
export type Recover<E> = (error: E, name: string) => ToolOutcome.ToolOutcome

/** A tool family of `tools`: a name it does not know answers `undefined`. */
export function family<Ctx>(tools: ReadonlyArray<ToolDef<Ctx>>, options: FamilyOptions<Ctx>): ToolFamily
export function family<Ctx, E>(
  tools: ReadonlyArray<ToolDef<Ctx, E>>,
  options: FamilyOptions<Ctx> & { readonly recover: Recover<E> }
): ToolFamily
export function family<Ctx, E>(
  tools: ReadonlyArray<ToolDef<Ctx, E>>,
  options: FamilyOptions<Ctx> & { readonly recover?: Recover<E> }
): ToolFamily {
  const byName = new Map(tools.map((t) => [t.name, t]))
  const { around, context, files, git, instructions, policyOf, recover, requiredSkillsOf, spill } = options
  return {
    ...(spill === undefined ? {} : { spill }),
    ...(files === undefined ? {} : { files }),
    ...(git === undefined ? {} : { git }),
    ...(instructions === undefined ? {} : { instructions }),
    specs: tools.map((t) => t.spec),
    call: (name, input, call) => {
      const tool = byName.get(name)
      if (tool === undefined) return undefined
      const prepared = tool.prepare(input)
      if (Result.isFailure(prepared)) return Effect.succeed(prepared.failure)
      const run = prepared.success(context(call)).pipe(
        Effect.catch((error) => (recover === undefined ? Effect.die(error) : Effect.succeed(recover(error, name))))
      )
      return around === undefined ? run : around(name, call, run)
    },
    policyOf: (name) => (byName.has(name) ? policyOf?.(name) : undefined),
    untrusted: tools.some((t) => t.untrusted),
    requiredSkillsOf: (name) => (byName.has(name) ? requiredSkillsOf?.(name) ?? [] : []),
    deferred: new Set()
  }
}
