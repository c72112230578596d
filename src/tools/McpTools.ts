/**
 * The MCP tools of one run: every enabled server of the run's snapshot is
 * leased once for the run from the warm sessions (McpSessions; bearer auth
 * opened now, Svc-Run-Id / Svc-Root-Run-Id headers on every request made for
 * the run), its tools filtered and named `mcp__{server}__{tool}`. A server that cannot be reached contributes no
 * tools (reported once as an `error` chunk); a disabled server's tools fail
 * when called. A tool whose input schema is past the schema bounds
 * (SchemaBudget.ts) is not offered (reported the same way; a call fails with
 * `tool_schema_refused`), and structured content is validated against the
 * tool's outputSchema in the validation worker (SchemaWorker.ts). Tool errors
 * are results the model sees, never run failures.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Duration, Effect, Redacted, type Scope } from "effect"
import type { ToolSpec } from "../../domain/Conversation.ts"
import type { SecretId } from "../../domain/Ids.ts"
import type { Principal } from "../../domain/Principal.ts"
import type { PlannedToolServer } from "../../domain/RunPlan.ts"
import { ToolLimits } from "../../domain/ToolPolicy.ts"
import { maskCredentials, maskOutcome } from "./CredentialMask.ts"
import type { Lease, McpSessions } from "./McpSessions.ts"
import { runHeaders, type RunIdentity } from "./RunHeaders.ts"
import { toolSchemaProblem } from "./SchemaBudget.ts"
import * as SchemaWorker from "./SchemaWorker.ts"
import type { ToolFamily, ToolPolicyRef } from "./ToolFamily.ts"
import * as ToolOutcome from "./ToolOutcome.ts"
import * as ToolResults from "./ToolResults.ts"
import { exposedTools } from "./ToolServers.ts"

/** MCP tools: `deferred` holds tools whose server's `defer` is null or true. */
export interface McpToolset extends ToolFamily {
  /** Problems met while connecting (one message per unreachable server). */
  readonly problems: ReadonlyArray<string>
}

const capDescription = (d: string | undefined): string =>
  (d ?? "").length > ToolLimits.maxDescriptionChars ? (d ?? "").slice(0, ToolLimits.maxDescriptionChars) : d ?? ""

const textOf = (result: CallToolResult): string => {
  if (result.structuredContent !== undefined && result.content.length === 0) {
    return JSON.stringify(result.structuredContent)
  }
  return result.content
    .map((part) => (part.type === "text" ? part.text : JSON.stringify(part)))
    .join("\n")
}

/**
 * Why a tool's structured content is refused: it does not match the tool's outputSchema, or the
 * schema itself cannot be used (validated in the validation worker: linear-time patterns, a
 * time limit). An error result is not checked, as the SDK did not.
 */
const outputProblem = (
  schema: Readonly<Record<string, unknown>> | undefined,
  result: CallToolResult
): Effect.Effect<string | undefined> =>
  schema === undefined || result.isError === true || result.structuredContent === undefined
    ? Effect.succeed(undefined)
    : Effect.map(SchemaWorker.validate(schema, result.structuredContent), (v) =>
      v._tag === "Valid"
        ? undefined
        : v._tag === "Invalid"
        ? `Structured content does not match the tool's output schema: ${v.message}`
        : `The tool's output schema ${v.problem}`)

export const connectAll = (options: {
  readonly principal: Principal
  /** Sent as the run's headers on every request made for it (RunHeaders). */
  readonly run: RunIdentity
  readonly servers: ReadonlyArray<PlannedToolServer>
  readonly sessions: McpSessions["Service"]
  /** Read every server's tool list afresh (a run resuming after a park). */
  readonly relist: boolean
  readonly reveal: (
    principal: Principal,
    secretId: SecretId,
    field: string
  ) => Effect.Effect<Redacted.Redacted, unknown>
}): Effect.Effect<McpToolset, never, Scope.Scope> =>
  Effect.gen(function*() {
    const specs: Array<ToolSpec> = []
    const problems: Array<string> = []
    const routes = new Map<
      string,
      {
        readonly server: PlannedToolServer
        readonly tool: string
        readonly lease: Lease | undefined
        /** The server's token, masked in whatever comes back. */
        readonly credentials: ReadonlyArray<string>
        /** The tool's outputSchema: structured content is validated against it in the validation worker. */
        readonly outputSchema?: Readonly<Record<string, unknown>> | undefined
        /** Why the tool is not offered (its input schema is past the schema bounds): a call fails saying so. */
        readonly refused?: string
      }
    >()
    for (const server of options.servers) {
      const prefix = `mcp__${server.name}__`
      if (!server.config.enabled) {
        routes.set(prefix, { server, tool: "", lease: undefined, credentials: [] })
        continue
      }
      const auth = server.config.auth
      const credentials: Array<string> = []
      const connected = yield* Effect.gen(function*() {
        const token = auth.type === "bearer"
          ? yield* options.reveal(options.principal, auth.secretId, "auth.secretId")
          : undefined
        if (token !== undefined) credentials.push(Redacted.value(token))
        return yield* options.sessions.acquire({
          serverId: server.id,
          configVersion: server.configVersion ?? 0,
          transport: server.config.transport,
          url: server.config.url,
          token,
          timeoutMs: server.config.requestTimeoutMs
        }, { headers: runHeaders(options.run), relist: options.relist })
      }).pipe(Effect.result)
      if (connected._tag === "Failure") {
        const cause = connected.failure
        const reason = typeof cause === "object" && cause !== null && "message" in cause
          ? String(cause.message)
          : "unknown error"
        problems.push(
          `Tool server '${server.name}' is unavailable for this run: ${maskCredentials(reason, credentials)}`
        )
        continue
      }
      const lease = connected.success
      const tools = lease.tools
      const byName = new Map(tools.map((t) => [t.name, t]))
      for (const ref of exposedTools(server.config, server.name, tools.map((t) => t.name))) {
        const tool = byName.get(ref.name)
        const inputSchema = tool?.inputSchema ?? { type: "object" }
        const route = { server, tool: ref.name, lease, credentials, outputSchema: tool?.outputSchema }
        // A schema past the bounds would be expanded and walked on every model request: the tool is left out.
        const problem = toolSchemaProblem(inputSchema)
        if (problem !== undefined) {
          const refused = `its input schema ${problem}`
          problems.push(`Tool '${ref.namespacedName}' of server '${server.name}' is not offered: ${refused}.`)
          routes.set(ref.namespacedName, { ...route, refused })
          continue
        }
        specs.push({ name: ref.namespacedName, description: capDescription(tool?.description), inputSchema })
        routes.set(ref.namespacedName, route)
      }
    }

    const call = (name: string, input: unknown): Effect.Effect<ToolOutcome.ToolOutcome> | undefined => {
      const route = routes.get(name) ??
        [...routes.entries()].find(([key, r]) => r.lease === undefined && name.startsWith(key))?.[1]
      if (route === undefined) return undefined
      const { credentials, lease, outputSchema, refused, server, tool } = route
      if (lease === undefined) {
        return Effect.succeed(ToolOutcome.failure("tool_server_disabled", `tool server '${server.name}' is disabled.`))
      }
      if (refused !== undefined) {
        return Effect.succeed(ToolOutcome.failure("tool_schema_refused", `tool '${name}' is not offered: ${refused}.`))
      }
      const args = typeof input === "object" && input !== null && !Array.isArray(input)
        ? (input as Record<string, unknown>)
        : {}
      return lease.call(tool, args).pipe(
        Effect.timeoutOrElse({
          duration: Duration.millis(server.config.requestTimeoutMs),
          orElse: () => Effect.fail(new Error(`no result within ${server.config.requestTimeoutMs} ms`))
        }),
        Effect.flatMap((result) => Effect.map(outputProblem(outputSchema, result), (problem) => ({ result, problem }))),
        Effect.map(({ problem, result }): ToolOutcome.ToolOutcome =>
          problem !== undefined
            ? ToolOutcome.failure("tool_server_error", maskCredentials(problem, credentials))
            : ToolResults.shape(
              name,
              maskOutcome({
                output: result.structuredContent ?? result.content,
                text: textOf(result),
                isError: result.isError === true
              }, credentials),
              server.config
            )
        ),
        Effect.catch((cause) => {
          const message = maskCredentials(cause instanceof Error ? cause.message : String(cause), credentials)
          return Effect.succeed(ToolOutcome.failure("tool_server_error", message))
        })
      )
    }
    const policyOf = (name: string): ToolPolicyRef | undefined => {
      const route = routes.get(name) ??
        [...routes.entries()].find(([key, r]) => r.lease === undefined && name.startsWith(key))?.[1]
      if (route === undefined) return undefined
      const originalName = route.tool === "" ? name.slice(`mcp__${route.server.name}__`.length) : route.tool
      return { approval: route.server.config.approval, gatedTools: route.server.config.gatedTools, originalName }
    }
    const untrusted = options.servers.some((s) => s.config.enabled && !s.config.trusted)
    const requiredSkillsOf = (name: string): ReadonlyArray<string> => {
      const route = routes.get(name)
      return route === undefined ? [] : ToolResults.skillList(route.server.config.requiredSkills)
    }
    const deferred = new Set(
      [...routes.entries()].flatMap((
        [name, r]
      ) => (r.lease !== undefined && r.refused === undefined && r.server.config.defer !== false ? [name] : []))
    )
    return { specs, problems, call, policyOf, untrusted, requiredSkillsOf, deferred }
  })
