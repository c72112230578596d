/**
 * The command the user runs the CLI with, for the hints it prints
 * (`follow: <it> runs tail run_...`): `npm run -s cli --` when npm runs it
 * from a checkout (`npm run cli`), `agent-service` when it is installed.
 */
export const cliName: string = process.env["npm_lifecycle_event"] === "cli" ? "npm run -s cli --" : "agent-service"
