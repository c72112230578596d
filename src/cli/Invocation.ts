/**
 * What the CLI was started with besides its arguments (src/cli/Main.ts
 * `runCli` provides it): the command the user runs it with, for the hints it
 * prints (`follow: <it> runs tail run_...`), and standard input, read only
 * when a command asks for it (`--stdin`).
 */
import { Context } from "effect"

export interface InvocationShape {
  /** `npm run -s cli --` when npm runs it from a checkout (`npm run cli`), `agent-service` when it is installed. */
  readonly name: string
  readonly stdin: NodeJS.ReadableStream
}

export class Invocation extends Context.Service<Invocation, InvocationShape>()("svc/cli/Invocation") {}

/** The name the CLI gives itself in hints, from the environment it was started in. */
export const cliNameOf = (env: Readonly<Record<string, string | undefined>>): string =>
  env["npm_lifecycle_event"] === "cli" ? "npm run -s cli --" : "agent-service"
