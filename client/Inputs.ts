/**
 * Inputs as callers write them (plain JSON, ids as strings) checked against
 * the contract's own schemas before anything is sent, with the parse options
 * the server uses (every issue, no unknown field): a mistake is an
 * `invalid_request` ClientError naming the field, never a field silently dropped.
 */
import { Effect, Schema } from "effect"
import { ClientId } from "../domain/Ids.ts"
import { InteractionKind, InteractionStatus } from "../domain/Interaction.ts"
import { PageQuery } from "../domain/Page.ts"
import { RunStatus } from "../domain/Run.ts"
import { type ClientError, invalidRequest } from "./Failures.ts"

const parseOptions = { errors: "all", onExcessProperty: "error" } as const

/** `value` decoded with `schema`; `what` names it in the error. */
export const checked = <S extends Schema.Top>(schema: S, what: string) => {
  const decode = Schema.decodeUnknownEffect(schema, parseOptions)
  return (value: unknown): Effect.Effect<S["Type"], ClientError, S["DecodingServices"]> =>
    Effect.mapError(decode(value), (error) => invalidRequest(what, error))
}

/** Ids as the API shapes them (`agent_...`, `thread_...`): branded once checked. */
export const ids = {
  agent: checked(ClientId.agent, "agent id"),
  thread: checked(ClientId.thread, "thread id"),
  run: checked(ClientId.run, "run id"),
  interaction: checked(ClientId.interaction, "interaction id"),
  file: checked(ClientId.file, "file id"),
  apiKey: checked(ClientId.apiKey, "API key id"),
  toolServer: checked(ClientId.toolServer, "tool server id"),
  httpConnection: checked(ClientId.httpConnection, "HTTP connection id"),
  secret: checked(ClientId.secret, "secret id"),
  hook: checked(ClientId.hook, "hook id"),
  resultHandler: checked(ClientId.resultHandler, "result handler id")
}

export interface PageOptions {
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

const page = checked(Schema.Struct(PageQuery), "list options")

/** `limit` and `cursor` as the list routes take them. */
export const pageQuery = (options: PageOptions) =>
  page({
    ...(options.limit === undefined ? {} : { limit: String(options.limit) }),
    ...(options.cursor === undefined ? {} : { cursor: options.cursor })
  })

/** An optional filter, checked when present. */
const optional = <S extends Schema.Top>(schema: S, what: string) => {
  const check = checked(schema, what)
  return (value: unknown) => (value === undefined ? Effect.succeed(undefined) : check(value))
}

export const filters = {
  agentId: optional(ClientId.agent, "agentId"),
  threadId: optional(ClientId.thread, "threadId"),
  runId: optional(ClientId.run, "runId"),
  runStatus: optional(RunStatus, "status"),
  interactionStatus: optional(InteractionStatus, "status"),
  interactionKind: optional(InteractionKind, "kind")
}
