/**
 * `agent-service environment run --url <base> --token <token> --root <dir>`
 * (issue 31): runs this machine as a runner of an environment, serving the
 * remote workspace tools in `--root` until stopped (src/environments/Runner.ts,
 * docs/guide/remote-workspaces.md). `--url` is the CLI's global flag (env
 * SVC_URL); the token may come from SVC_ENVIRONMENT_TOKEN instead of the
 * command line (where other users of the machine could read it). Exits 1 when
 * the URL, the root or the token is refused.
 */
import { Config, Console, Effect } from "effect"
import { Command, Flag } from "effect/cli"
import pkg from "../../package.json" with { type: "json" }
import * as Runner from "../environments/Runner.ts"
import { Reported } from "./CommandFailure.ts"
import { Url } from "./Connection.ts"

const run = Command.make("run", {
  token: Flag.Redacted("token").pipe(
    Flag.withFallbackConfig(Config.Redacted("SVC_ENVIRONMENT_TOKEN")),
    Flag.withDescription("The environment's connection token (env SVC_ENVIRONMENT_TOKEN)")
  ),
  root: Flag.String("root").pipe(
    Flag.withDescription("The directory the workspace tools work in; nothing outside it is reachable by their paths")
  )
}).pipe(
  Command.withDescription(
    "Serve an environment's remote workspace from this machine: dials out to --url, runs the agents' file and shell tools in --root"
  ),
  Command.withHandler(({ root, token }) =>
    Effect.gen(function*() {
      const url = yield* Url
      return yield* Runner.run({
        url,
        token,
        root,
        version: pkg.version,
        say: (line) => Console.error(`[runner] ${line}`)
      })
    }).pipe(
      Effect.catchTag("RunnerRefused", (e) =>
        Effect.andThen(Console.error(`[runner] ${e.message}`), Effect.fail(new Reported({ exitCode: 1 }))))
    )
  )
)

export const environment = Command.make("environment").pipe(
  Command.withDescription("Environments of remote workspaces"),
  Command.withSubcommands([run])
)
