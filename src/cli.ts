#!/usr/bin/env node
/**
 * The command line (`npm run -s cli -- ...` from a checkout, `agent-service
 * ...` once installed: src/cli.mjs checks Node's version and runs this), through the typed client (`agent-service/client`): agents, threads,
 * send, runs, interactions, tool servers, HTTP connections, secrets, hooks,
 * result handlers and (with an admin key) API keys, each with `--json`.
 * `--url` / `SVC_URL` and `--api-key` / `SVC_API_KEY` name the service.
 * Exit codes (CommandFailure.ExitCode): 0 done, 1 the service or the
 * connection failed, 2 a usage mistake, 3 the run failed, 4 it was cancelled.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Effect } from "effect"
import { Command } from "effect/cli"
import pkg from "../package.json" with { type: "json" }
import { agents } from "./cli/AgentsCommand.ts"
import { reported } from "./cli/CommandFailure.ts"
import { ApiKey, Url } from "./cli/Connection.ts"
import { environment } from "./cli/EnvironmentCommand.ts"
import { hooks } from "./cli/HooksCommand.ts"
import { httpConnections } from "./cli/HttpConnectionsCommand.ts"
import { interactions } from "./cli/InteractionsCommand.ts"
import { keys } from "./cli/KeysCommand.ts"
import { Output } from "./cli/Output.ts"
import { resultHandlers } from "./cli/ResultHandlersCommand.ts"
import { runs } from "./cli/RunsCommand.ts"
import { secrets } from "./cli/SecretsCommand.ts"
import { send } from "./cli/SendCommand.ts"
import { threads } from "./cli/ThreadsCommand.ts"
import { toolServers } from "./cli/ToolServersCommand.ts"

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

Command.run(cli, { version: pkg.version }).pipe(
  reported,
  Effect.provide([Output.layer, NodeServices.layer]),
  NodeRuntime.runMain
)
