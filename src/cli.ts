#!/usr/bin/env node
/**
 * The command line (`npm run cli -- ...`, or `agent-service ...` once the
 * package is linked), through the typed client (`agent-service/client`):
 * `agents list|create`, `send`, `threads history`, `runs tail`,
 * `interactions list|approve|deny|answer` and, with an admin key, `keys create|list|revoke`.
 * `--url` / `SVC_URL` and `--api-key` / `SVC_API_KEY` name the service.
 * Exit codes: 0 done, 1 the service or the connection failed, 2 a usage mistake.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Effect } from "effect"
import { Command } from "effect/cli"
import pkg from "../package.json" with { type: "json" }
import { agents } from "./cli/AgentsCommand.ts"
import { reported } from "./cli/CommandFailure.ts"
import { ApiKey, Url } from "./cli/Connection.ts"
import { interactions } from "./cli/InteractionsCommand.ts"
import { keys } from "./cli/KeysCommand.ts"
import { Output } from "./cli/Output.ts"
import { runs, send } from "./cli/RunCommands.ts"
import { threads } from "./cli/ThreadsCommand.ts"

const cli = Command.make("agent-service").pipe(
  Command.withDescription("The agent service from the command line"),
  Command.withSubcommands([agents, send, threads, runs, interactions, keys]),
  Command.withGlobalFlags([Url, ApiKey])
)

Command.run(cli, { version: pkg.version }).pipe(
  reported,
  Effect.provide([Output.layer, NodeServices.layer]),
  NodeRuntime.runMain
)
