#!/usr/bin/env node
/**
 * The command line (`npm run -s cli -- ...` from a checkout, `agent-service
 * ...` once installed: src/cli.mjs checks Node's version and runs this), through the typed client (`agent-service/client`): agents, threads,
 * send, runs, interactions, tool servers, HTTP connections, secrets, hooks,
 * result handlers and (with an admin key) API keys, each with `--json`.
 * `--url` / `SVC_URL` and `--api-key` / `SVC_API_KEY` name the service.
 * Exit codes (CommandFailure.ExitCode): 0 done, 1 the service or the
 * connection failed, 2 a usage mistake, 3 the run failed, 4 it was cancelled.
 * This file only wires the process to the CLI (src/cli/Main.ts `runCli`):
 * its arguments, environment, stdin, stdout and stderr, and its exit code.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect } from "effect"
import { ExitCode, Reported } from "./cli/CommandFailure.ts"
import { runCli } from "./cli/Main.ts"

runCli({
  args: process.argv.slice(2),
  env: process.env,
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr
}).pipe(
  // Reported is not reported again: the runtime's main only exits with its code.
  Effect.flatMap((exitCode) => exitCode === ExitCode.ok ? Effect.void : Effect.fail(new Reported({ exitCode }))),
  NodeRuntime.runMain
)
