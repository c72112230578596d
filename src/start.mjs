/**
 * `npm start`: checks the Node.js version in plain JavaScript first, so an old
 * Node (which cannot load the service's .ts files) says in one line what to
 * install instead of failing on `Unknown file extension ".ts"`; then starts
 * the service (src/main.ts) in this same process.
 */
import { nodeVersionProblem } from "./NodeVersion.mjs"

const problem = nodeVersionProblem(process.versions.node)
if (problem !== undefined) {
  process.stderr.write(`agent-service: ${problem}\n`)
  process.exit(1)
}
await import("./main.ts")
