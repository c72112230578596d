#!/usr/bin/env node
/**
 * The `agent-service` command (package.json `bin`, and `npm run cli`): checks
 * the Node.js version in plain JavaScript first, so an old Node (which cannot
 * load the CLI's .ts files) says in one line what to install, then runs the
 * CLI (src/cli.ts) in this same process.
 */
import { nodeVersionProblem } from "./NodeVersion.mjs"

const problem = nodeVersionProblem(process.versions.node)
if (problem !== undefined) {
  process.stderr.write(`agent-service: ${problem}\n`)
  process.exit(1)
}
await import("./cli.ts")
