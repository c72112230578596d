/**
 * How throughput scales with runner processes on one host: the same
 * closed-loop load (text turns, then MCP tool turns; `npm run bench`'s
 * scenarios) against `SVC_PROCESSES=1, 2, 3` (the supervisor hands
 * connections to its workers in turn; each worker is a cluster runner on the
 * one PostgreSQL), a fresh database each time.
 */
import type { Scenario } from "../support/Http.ts"
import { createDatabase, dropDatabase } from "../support/Lifecycle.ts"
import { runClients, sleep } from "../support/Load.ts"
import { backendPids } from "../support/Postgres.ts"
import { stopChild } from "../support/Processes.ts"
import { procCpu, procTree } from "../support/ProcStats.ts"
import { createScenarioAgents, createThreads, mcpScenario, textScenario } from "../support/Scenarios.ts"
import { type McpServer, startService } from "../support/Service.ts"
import { percentile, sortedAsc } from "../support/Table.ts"

export interface ThroughputRow {
  readonly processes: number
  readonly scenario: string
  readonly clients: number
  readonly turns: number
  readonly failed: number
  readonly turnsPerSec: number
  readonly p50: number
  readonly p99: number
  /** Cores busy: the service's processes together, and PostgreSQL's backends of the database. */
  readonly serviceCores: number
  readonly postgresCores: number
}

export interface ThroughputOptions {
  readonly database: (processes: number) => string
  readonly apiKey: string
  readonly mcp: McpServer
  readonly processes: ReadonlyArray<number>
  readonly clients: number
  readonly turnsPerClient: number
}

const listeners = (output: string) => (output.match(/Listening on http:/g) ?? []).length

const cpuOf = (pids: ReadonlyArray<number>) => new Map(pids.map((pid) => [pid, procCpu(pid)]))
const spent = (before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>) =>
  [...after].reduce((sum, [pid, s]) => sum + s - (before.get(pid) ?? 0), 0)

const measureOne = async (
  options: ThroughputOptions,
  processes: number,
  base: string,
  servicePid: number | undefined,
  scenario: Scenario,
  agentId: string
): Promise<ThroughputRow> => {
  const { apiKey: key, clients, turnsPerClient } = options
  const database = options.database(processes)
  const threads = await createThreads(base, key, agentId, clients)
  // Warm-up: every process compiles its hot paths.
  await runClients(base, key, threads, 5, scenario)
  const pids = [...procTree(servicePid), ...await backendPids(database)]
  const cpu0 = cpuOf(pids)
  const t0 = performance.now()
  const results = (await runClients(base, key, threads, turnsPerClient, scenario)).flat()
  const wallS = (performance.now() - t0) / 1000
  const cpu1 = cpuOf(pids)
  const service = new Set(procTree(servicePid))
  const part = (inService: boolean) =>
    spent(
      new Map([...cpu0].filter(([pid]) => service.has(pid) === inService)),
      new Map([...cpu1].filter(([pid]) => service.has(pid) === inService))
    ) / wallS
  const ok = results.filter((r) => r.ok)
  const latencies = sortedAsc(ok.map((r) => r.latencyMs))
  return {
    processes,
    scenario: scenario.name,
    clients,
    turns: results.length,
    failed: results.length - ok.length,
    turnsPerSec: ok.length / wallS,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    serviceCores: part(true),
    postgresCores: part(false)
  }
}

export const measureThroughput = async (options: ThroughputOptions): Promise<Array<ThroughputRow>> => {
  const rows: Array<ThroughputRow> = []
  for (const processes of options.processes) {
    const database = options.database(processes)
    await createDatabase(database)
    const service = await startService({
      database,
      apiKey: options.apiKey,
      env: processes > 1 ? { SVC_PROCESSES: String(processes) } : {},
      readyTimeoutMs: 120_000
    })
    try {
      // Under the supervisor every worker prints its own line once it serves.
      while (listeners(service.started.output()) < processes) await sleep(100)
      const agents = await createScenarioAgents(service.base, options.apiKey, options.mcp.url)
      for (const [scenario, agentId] of [[textScenario, agents.text], [mcpScenario, agents.mcp]] as const) {
        process.stderr.write(`throughput: ${processes} process(es), ${scenario.name}, ${options.clients} clients ... `)
        const row = await measureOne(options, processes, service.base, service.pid, scenario, agentId)
        process.stderr.write(`${row.turnsPerSec.toFixed(1)} turns/s${row.failed > 0 ? `, ${row.failed} FAILED` : ""}\n`)
        rows.push(row)
      }
    } finally {
      await stopChild(service.started.child)
      await dropDatabase(database)
    }
  }
  return rows
}
