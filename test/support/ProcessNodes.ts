/**
 * Service processes as the multi-process tests run them: the nodes of one
 * deployment on a PostgreSQL database (the environment they share, each on a
 * port and a runner port of its own), and an agent whose tool server is a
 * test's gate, registered through one of them.
 */
import { Effect } from "effect"
import { Agent } from "../../domain/Agent.ts"
import { ToolServer } from "../../domain/ToolServer.ts"
import { freePortNow } from "./FreePort.ts"
import * as ServiceProcess from "./ServiceProcess.ts"

/**
 * What every node of a deployment on `databaseUrl` is started with: its keys
 * (`key:organization:workspace`), a master key of 32 `keyByte`s, quiet logs,
 * runners on 127.0.0.1.
 */
export const deploymentEnv = (databaseUrl: string, apiKeys: string, keyByte: number): Record<string, string> => ({
  DATABASE_URL: databaseUrl,
  SVC_API_KEYS: apiKeys,
  SVC_MASTER_KEY: Buffer.alloc(32, keyByte).toString("base64"),
  SVC_QUIET: "1",
  SVC_RUNNER_HOST: "127.0.0.1"
})

/** A node: the service on `env`, listening on a free port, its runner on another. */
export const startNode = (env: Record<string, string>) =>
  Effect.gen(function*() {
    const port = yield* Effect.promise(freePortNow)
    const runnerPort = yield* Effect.promise(freePortNow)
    return yield* ServiceProcess.start({ ...env, PORT: String(port), SVC_RUNNER_PORT: String(runnerPort) })
  })

/** Registers `gateUrl` as the tool server `gate` on the process at `url`, then an agent offering it (and `capabilities`). */
export const gatedAgent = (url: string, key: string, gateUrl: string, capabilities: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const post = (path: string, body: unknown) => ServiceProcess.request(url, "POST", path, key, body)
    const server = ServiceProcess.decodeJson(
      ToolServer,
      (yield* post("/v1/tool-servers", { name: "gate", transport: "http", url: gateUrl })).text
    )
    const body = { capabilities: { ...capabilities, mcp: { toolServerIds: [server.id] } } }
    return ServiceProcess.decodeJson(Agent, (yield* post("/v1/agents", body)).text)
  })
