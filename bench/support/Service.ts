/**
 * The processes a benchmark measures: the service (`node src/main.ts` on a
 * PostgreSQL database, scripted model) and the MCP tool server its tool turns
 * call (`@modelcontextprotocol/server-everything`, Streamable HTTP), each on
 * free loopback ports.
 */
import { randomBytes } from "node:crypto"
import { databaseUrl } from "./Postgres.ts"
import { freePort, type Started, startNode } from "./Processes.ts"

const everythingEntry = "node_modules/@modelcontextprotocol/server-everything/dist/index.js"

export interface McpServer {
  readonly started: Started
  /** Its Streamable HTTP endpoint. */
  readonly url: string
}

export const startEverything = async (): Promise<McpServer> => {
  const port = await freePort()
  const started = await startNode(
    "server-everything",
    [everythingEntry, "streamableHttp"],
    { PORT: String(port) },
    /listening on port \d+/
  )
  return { started, url: `http://127.0.0.1:${port}/mcp` }
}

export interface ServiceOptions {
  readonly database: string
  readonly apiKey: string
  /** Per-request access log (no SVC_QUIET). */
  readonly accessLog?: boolean
  /** Node options before the entry point (`--expose-gc`, `--import ...`). */
  readonly nodeArgs?: ReadonlyArray<string>
  readonly env?: Record<string, string>
  readonly readyTimeoutMs?: number
}

/** The environment of a service on `database`, on fresh ports (the master key is fixed per database name, so a restart opens its secrets). */
export const serviceEnv = async (options: ServiceOptions): Promise<Record<string, string>> => ({
  DATABASE_URL: databaseUrl(options.database),
  PORT: String(await freePort()),
  // Previews on any free port (their default, PORT + 1, may be another node's).
  SVC_PREVIEW_PORT: "0",
  HOST: "127.0.0.1",
  SVC_RUNNER_PORT: String(await freePort()),
  SVC_RUNNER_HOST: "127.0.0.1",
  SVC_API_KEYS: `${options.apiKey}:org_bench:prod`,
  SVC_MASTER_KEY: masterKeyFor(options.database),
  SVC_ALLOW_PRIVATE_URLS: "1",
  ...(options.accessLog === true ? {} : { SVC_QUIET: "1" }),
  ...options.env
})

const masterKeys = new Map<string, string>()
const masterKeyFor = (database: string): string => {
  const known = masterKeys.get(database)
  if (known !== undefined) return known
  const key = randomBytes(32).toString("base64")
  masterKeys.set(database, key)
  return key
}

export interface Service {
  readonly started: Started
  /** `http://127.0.0.1:<port>`. */
  readonly base: string
  readonly pid: number | undefined
}

/** Starts the service and waits for its "Listening on" line. */
export const startService = async (options: ServiceOptions, env?: Record<string, string>): Promise<Service> => {
  const started = await startNode(
    "service",
    [...(options.nodeArgs ?? []), "src/main.ts"],
    env ?? await serviceEnv(options),
    /Listening on (http:\/\/[^\s"]+)/,
    options.readyTimeoutMs
  )
  return { started, base: started.match[1], pid: started.child.pid }
}
