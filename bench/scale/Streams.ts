/**
 * How many open event streams one node holds. Runs are parked on approvals
 * (Parking.ts); a stream of a parked run resumed after its last frame
 * (`GET /v1/runs/:id/stream` with `Last-Event-ID`) stays open until the run
 * resumes, which is how a client waits on a person. A client process of its
 * own (StreamClient.ts) opens them on a node restarted after the parking; the
 * node's memory is taken after a full collection before and after; then runs are approved one by one and the time
 * to their stream's first chunk and end is measured, first with only a few
 * streams open, then with all of them.
 */
import { createDatabase, dropDatabase } from "../support/Lifecycle.ts"
import { sleep } from "../support/Load.ts"
import { vacuum } from "../support/Postgres.ts"
import type { McpServer } from "../support/Service.ts"
import { type Memory, startMeasuredNode } from "./Node.ts"
import { createParkingAgent, type ParkedRun, parkMany } from "./Parking.ts"
import { startStreamClient } from "./StreamClientProcess.ts"

export interface Latencies {
  readonly firstChunkMs: ReadonlyArray<number>
  readonly doneMs: ReadonlyArray<number>
  readonly bad: number
}

export interface StreamsResult {
  readonly streams: number
  /** Streams the node answered (SSE started), and how long opening them took. */
  readonly answered: number
  readonly openSeconds: number
  readonly before: Memory
  readonly open: Memory
  readonly afterClose: Memory
  /** Cores the node kept busy over 10 s with every stream open and nothing happening. */
  readonly idleCores: number
  /** Approvals with only the probe streams open, then with every stream open. */
  readonly few: Latencies
  readonly loaded: Latencies
  /** After the approvals under load: streams still waiting, ended, failed. */
  readonly census: {
    readonly waiting: number
    readonly ended: number
    readonly failed: number
    readonly firstError?: string
  }
  readonly firstError: string | undefined
}

export interface StreamsOptions {
  readonly database: string
  readonly apiKey: string
  readonly mcp: McpServer
  readonly streams: number
  /** Runs approved in each latency phase. */
  readonly probes: number
  readonly parkConcurrency: number
}

const streamRoute = /^svc_http_requests_total\{method="GET",route="\/v1\/runs\/:id\/stream",status="200"\} (\d+)$/m

/** Streams the node answered so far (a waiting stream's headers reach the client only with its first chunk). */
const answeredStreams = async (base: string): Promise<number> => {
  const text = await (await fetch(`${base}/metrics`)).text()
  return Number(streamRoute.exec(text)?.[1] ?? 0)
}

const waitAnswered = async (base: string, target: number, timeoutMs: number): Promise<number> => {
  const deadline = performance.now() + timeoutMs
  let answered = 0
  while ((answered = await answeredStreams(base)) < target && performance.now() < deadline) await sleep(250)
  return answered
}

const targets = (runs: ReadonlyArray<ParkedRun>) => runs.map((r) => ({ runId: r.runId, lastEventId: r.lastEventId }))

export const measureStreams = async (options: StreamsOptions): Promise<StreamsResult> => {
  const { apiKey: key, streams: n, probes } = options
  await createDatabase(options.database)
  const node = await startMeasuredNode(
    { database: options.database, apiKey: key, env: { SVC_METRICS: "on" }, readyTimeoutMs: 120_000 },
    "/v1/agents?limit=1"
  )
  const agentId = await createParkingAgent(node.base(), key, options.mcp.url)
  process.stderr.write(`streams: parking ${n + 2 * probes} runs ...\n`)
  const parked = await node.explainFailure(() =>
    parkMany(node.base(), key, agentId, n + 2 * probes, options.parkConcurrency, n + 2 * probes, async () => {})
  )
  const few = parked.slice(0, probes)
  const loadedProbes = parked.slice(probes, 2 * probes)
  const held = parked.slice(2 * probes)

  await vacuum(options.database)
  // A fresh process: none of the parking's transient state (entities stay resident for a minute after their last message).
  await node.restart("/v1/agents?limit=1")
  await sleep(5_000)
  const before = await node.memory()
  const client = await startStreamClient(node.base(), key)
  try {
    process.stderr.write(`streams: approvals with ${probes} streams open ...\n`)
    await client.ask({ type: "open", runs: targets(few), concurrency: 50 }, "opened")
    await waitAnswered(node.base(), probes, 60_000)
    const fewResult = await client.ask({ type: "resolve", runs: few }, "resolved")

    process.stderr.write(`streams: opening ${n + probes} streams ...\n`)
    const t0 = performance.now()
    await client.ask({ type: "open", runs: targets([...loadedProbes, ...held]), concurrency: 200 }, "opened")
    const answered = (await waitAnswered(node.base(), 2 * probes + n, 600_000)) - probes
    const openSeconds = (performance.now() - t0) / 1000
    // Each answered stream still reads its run's log once: let that finish.
    await sleep(10_000)
    const open = await node.memory()
    const cpu0 = node.cpu()
    await sleep(10_000)
    const idleCores = (node.cpu() - cpu0) / 10

    process.stderr.write(`streams: approvals with ${answered} streams open ...\n`)
    const loadedResult = await client.ask({ type: "resolve", runs: loadedProbes }, "resolved")
    const census = await client.ask({ type: "census" }, "census")
    await client.ask({ type: "close" }, "closed")
    await sleep(10_000)
    const afterClose = await node.memory()
    const latencies = (r: typeof fewResult): Latencies => ({
      firstChunkMs: r.firstChunkMs,
      doneMs: r.doneMs,
      bad: r.bad
    })
    return {
      streams: n + probes,
      answered,
      openSeconds,
      before,
      open,
      afterClose,
      idleCores,
      few: latencies(fewResult),
      loaded: latencies(loadedResult),
      census,
      firstError: fewResult.firstError ?? loadedResult.firstError ?? census.firstError
    }
  } finally {
    client.stop()
    await node.stop()
    await dropDatabase(options.database)
  }
}
