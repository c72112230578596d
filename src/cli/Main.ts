/**
 * The CLI's one way to run (`runCli`): its commands (agents, threads, send,
 * runs, interactions, tool servers, HTTP connections, secrets, hooks, result
 * handlers, API keys, environment) over the arguments, environment, stdin,
 * stdout and stderr it is given, answering the exit code
 * (CommandFailure.ExitCode). src/cli.ts gives it the process's own; tests
 * give it theirs and read what it wrote (docs/design/testing.md).
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Cause, ConfigProvider, Console, Effect, Layer, Runtime } from "effect"
import { Command } from "effect/cli"
import { Console as NodeConsole } from "node:console"
import pkg from "../../package.json" with { type: "json" }
import { agents } from "./AgentsCommand.ts"
import { reported } from "./CommandFailure.ts"
import { ApiKey, Url } from "./Connection.ts"
import { environment } from "./EnvironmentCommand.ts"
import { hooks } from "./HooksCommand.ts"
import { httpConnections } from "./HttpConnectionsCommand.ts"
import { interactions } from "./InteractionsCommand.ts"
import { cliNameOf, Invocation } from "./Invocation.ts"
import { keys } from "./KeysCommand.ts"
import { Output, type Sink } from "./Output.ts"
import { resultHandlers } from "./ResultHandlersCommand.ts"
import { runs } from "./RunsCommand.ts"
import { secrets } from "./SecretsCommand.ts"
import { send } from "./SendCommand.ts"
import { threads } from "./ThreadsCommand.ts"
import { toolServers } from "./ToolServersCommand.ts"

const cli = Command.make("agent-service").pipe(
  Command.withDescription("The agent service from the command line"),
  Command.withSubcommands([
    agents,
    threads,
    send,
    runs,
    interactions,
    toolServers,
    httpConnections,
    secrets,
    hooks,
    resultHandlers,
    keys,
    environment
  ]),
  Command.withGlobalFlags([Url, ApiKey])
)

const main = Command.runWith(cli, { version: pkg.version })

/** What one run of the CLI is given: its arguments (without `node` and the script) and the process's parts. */
export interface CliIo {
  readonly args: ReadonlyArray<string>
  /** Where `--url`, `--api-key` and the like fall back to (SVC_URL, SVC_API_KEY, ...). */
  readonly env: Readonly<Record<string, string | undefined>>
  readonly stdin: NodeJS.ReadableStream
  readonly stdout: Sink
  readonly stderr: Sink
}

/**
 * Runs the CLI on `io` and answers its exit code, computed as the runtime's
 * main would (Runtime.defaultTeardown): 0 done, the code of a failure already
 * told (CommandFailure.Reported), 130 interrupted; anything else is logged
 * on `io`'s console first, as the runtime's main logs it.
 */
export const runCli = (io: CliIo): Effect.Effect<number> => {
  // The parser's help, version and errors, the runner's lines and the runtime's logs go through Console.
  const console = new NodeConsole({ stdout: io.stdout, stderr: io.stderr })
  const env = { ...io.env }
  return main(io.args).pipe(
    reported,
    Effect.tapCause((cause) =>
      Cause.hasInterruptsOnly(cause) || !Runtime.getErrorReported(Cause.squash(cause))
        ? Effect.void
        : Effect.logError(cause)
    ),
    Effect.exit,
    Effect.map((exit) => {
      let code = 0
      Runtime.defaultTeardown(exit, (c) => (code = c))
      return code
    }),
    Effect.provide(Layer.mergeAll(
      Output.layer(io.stdout, io.stderr),
      Layer.succeed(Invocation)({ name: cliNameOf(env), stdin: io.stdin }),
      NodeServices.layer
    )),
    Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord(env)),
    Effect.provideService(Console.Console, console)
  )
}
