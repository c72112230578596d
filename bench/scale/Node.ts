/**
 * One measured service node of the scale benchmarks: started with the heap
 * probe (HeapProbe.ts), asked for its memory after a full collection,
 * restarted on the same database with its start-up timed.
 */
import { Schema } from "effect"
import { explain } from "../support/Lifecycle.ts"
import { freePort, stopChild } from "../support/Processes.ts"
import { procCpu, procRss } from "../support/ProcStats.ts"
import { type Service, serviceEnv, type ServiceOptions, startService } from "../support/Service.ts"

const probeArgs = ["--expose-gc", "--import", "./bench/scale/HeapProbe.ts"]

export interface Memory {
  /** Resident set size, bytes. */
  readonly rss: number
  /** V8 heap in use after a full collection, bytes. */
  readonly heapUsed: number
  /** Memory outside the V8 heap held by JavaScript objects (buffers), bytes. */
  readonly external: number
}

export interface StartUp {
  /** Spawn to the "Listening on" line. */
  readonly listeningMs: number
  /** Spawn to the first answered request (`probePath`, 200). */
  readonly firstRequestMs: number
}

export interface MeasuredNode {
  readonly service: () => Service
  readonly base: () => string
  readonly memory: () => Promise<Memory>
  /** CPU seconds the node used so far. */
  readonly cpu: () => number
  /** Stops the node (SIGTERM) and starts it again on the same database; `probePath` is requested until it answers 200. */
  readonly restart: (probePath: string) => Promise<StartUp>
  readonly stop: () => Promise<void>
  /** Runs `work`; when it fails, the failure carries the end of what the node printed. */
  readonly explainFailure: <A>(work: () => Promise<A>) => Promise<A>
}

/** GETs `path` until it answers 200 (a new process may refuse the first connections). */
export const firstOk = async (base: string, key: string, path: string): Promise<void> => {
  for (let attempt = 0;; attempt++) {
    try {
      const response = await fetch(base + path, { headers: { authorization: `Bearer ${key}` } })
      const text = await response.text()
      if (response.status === 200) return
      if (attempt > 200) throw new Error(`GET ${path} answered ${response.status}: ${text}`)
    } catch (e) {
      if (attempt > 200) throw new Error(`GET ${path} failed: ${explain(e)}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** What the probe prints: `process.memoryUsage()`. */
const decodeUsage = Schema.decodeUnknownSync(
  Schema.fromJsonString(Schema.Struct({ rss: Schema.Number, heapUsed: Schema.Number, external: Schema.Number }))
)

/** Starts the node and waits until `probePath` answers 200. */
export const startMeasuredNode = async (options: ServiceOptions, probePath: string): Promise<MeasuredNode> => {
  const withProbe: ServiceOptions = { ...options, nodeArgs: [...probeArgs, ...(options.nodeArgs ?? [])] }
  const env = await serviceEnv(withProbe)
  const launch = async (path: string): Promise<{ service: Service; startUp: StartUp }> => {
    env["PORT"] = String(await freePort())
    const t0 = performance.now()
    const service = await startService(withProbe, env)
    const listeningMs = performance.now() - t0
    await firstOk(service.base, options.apiKey, path)
    return { service, startUp: { listeningMs, firstRequestMs: performance.now() - t0 } }
  }
  let current = await launch(probePath)
  const node: MeasuredNode = {
    service: () => current.service,
    base: () => current.service.base,
    memory: async () => {
      const { started, pid } = current.service
      const line = started.next(/SCALE_MEMORY (\{[^\n]*\})\n/, 30_000)
      started.child.kill("SIGUSR2")
      const usage = decodeUsage((await line)[1])
      return { rss: procRss(pid) || usage.rss, heapUsed: usage.heapUsed, external: usage.external }
    },
    cpu: () => procCpu(current.service.pid),
    restart: async (path) => {
      await stopChild(current.service.started.child)
      current = await launch(path)
      return current.startUp
    },
    stop: () => stopChild(current.service.started.child),
    explainFailure: async (work) => {
      try {
        return await work()
      } catch (e) {
        throw new Error(`${explain(e)}\nThe service printed:\n${current.service.started.output().slice(-6000)}`)
      }
    }
  }
  return node
}
