/**
 * The two turns the throughput benchmarks send, with the scripted model:
 *
 *   text  one model step: `hello` -> `Echo: hello`
 *   mcp   two model steps: `/tool mcp__everything__echo {"message":"hi"}`
 *         (one MCP tools/call to server-everything), then the answer
 *
 * and what they need: one tool server, one agent per scenario.
 */
import { api, idOf, type Scenario } from "./Http.ts"

export const textScenario: Scenario = { name: "text (1 step)", input: "hello", expect: "\"delta\":\"hello\"" }

export const mcpScenario: Scenario = {
  name: "mcp (2 steps, 1 MCP call)",
  input: "/tool mcp__everything__echo {\"message\":\"hi\"}",
  expect: "\"tool-output-available\""
}

export interface ScenarioAgents {
  readonly text: string
  readonly mcp: string
}

/** Registers server-everything (at `mcpUrl`) and an agent for each scenario. */
export const createScenarioAgents = async (base: string, key: string, mcpUrl: string): Promise<ScenarioAgents> => {
  const toolServer = await api(base, key, "POST", "/v1/tool-servers", {
    name: "everything",
    transport: "http",
    url: mcpUrl
  })
  const text = idOf(await api(base, key, "POST", "/v1/agents", {}))
  const mcp = idOf(
    await api(base, key, "POST", "/v1/agents", { capabilities: { mcp: { toolServerIds: [idOf(toolServer)] } } })
  )
  return { text, mcp }
}

/** `n` new threads of an agent. */
export const createThreads = (base: string, key: string, agentId: string, n: number): Promise<Array<string>> =>
  Promise.all(Array.from({ length: n }, async () => idOf(await api(base, key, "POST", "/v1/threads", { agentId }))))
