/**
 * Runs parked on an approval, made through the API as a client would: an
 * agent whose tool server (server-everything) has `approval: "always"`, and
 * per run a new thread and one streamed turn whose scripted model calls the
 * gated tool (the run parks: `waiting_for_approval`, its turn's stream ends)
 * and, once approved, answers `done`. Many clients at once.
 */
import { api, idOf } from "../support/Http.ts"
import { explain, shouldStop } from "../support/Lifecycle.ts"
import { resumedProperly } from "./StreamProtocol.ts"

export interface ParkedRun {
  readonly runId: string
  readonly interactionId: string
  /** The id of the parked turn's last frame: a stream resumed after it waits for the resumption. */
  readonly lastEventId: number
}

/** What the parked turn asks: the gated tool, then (after approval) the answer. */
export const parkingInput = "/tool mcp__gated__echo {\"message\":\"approved\"}\n/text done"

/** Registers the gated tool server and its agent; returns the agent's id. */
export const createParkingAgent = async (base: string, key: string, mcpUrl: string): Promise<string> => {
  const server = await api(base, key, "POST", "/v1/tool-servers", {
    name: "gated",
    transport: "http",
    url: mcpUrl,
    approval: "always"
  })
  return idOf(await api(base, key, "POST", "/v1/agents", { capabilities: { mcp: { toolServerIds: [idOf(server)] } } }))
}

/** One run parked on a new thread. */
export const parkOne = async (base: string, key: string, agentId: string): Promise<ParkedRun> => {
  const threadId = idOf(await api(base, key, "POST", "/v1/threads", { agentId }))
  const response = await fetch(`${base}/v1/threads/${threadId}/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ input: parkingInput })
  })
  const text = await response.text()
  const runId = response.headers.get("svc-run-id")
  const interactionId = /"interactionId":"(tar_[^"]+)"/.exec(text)?.[1]
  const ids = [...text.matchAll(/^id: (\d+)$/gm)]
  const lastEventId = Number(ids.at(-1)?.[1] ?? Number.NaN)
  if (response.status !== 200 || runId === null || interactionId === undefined || !text.endsWith("data: [DONE]\n\n")) {
    throw new Error(`the turn did not park (status ${response.status}):\n${text.slice(0, 2000)}`)
  }
  return { runId, interactionId, lastEventId }
}

export interface ParkProgress {
  readonly done: number
  readonly seconds: number
}

/**
 * Parks `count` runs with `concurrency` clients; `checkpoint` is awaited (all
 * clients paused) each time `every` more runs are parked, with the time spent
 * parking so far (checkpoints excluded).
 */
export const parkMany = async (
  base: string,
  key: string,
  agentId: string,
  count: number,
  concurrency: number,
  every: number,
  checkpoint: (progress: ParkProgress) => Promise<void>
): Promise<Array<ParkedRun>> => {
  const parked: Array<ParkedRun> = []
  let busyMs = 0
  let lastReport = performance.now()
  for (let next = 0; next < count && !shouldStop();) {
    const batch = Math.min(every, count - next)
    let claimed = 0
    const batchStart = performance.now()
    await Promise.all(Array.from({ length: Math.min(concurrency, batch) }, async () => {
      while (claimed < batch && !shouldStop()) {
        claimed++
        try {
          parked.push(await parkOne(base, key, agentId))
        } catch (e) {
          throw new Error(`parking run ${parked.length + 1} failed: ${explain(e)}`)
        }
        if (performance.now() - lastReport > 10_000) {
          lastReport = performance.now()
          const ms = busyMs + lastReport - batchStart
          process.stderr.write(`  ${parked.length} parked, ${((parked.length * 1000) / ms).toFixed(0)}/s\n`)
        }
      }
    }))
    busyMs += performance.now() - batchStart
    next += batch
    await checkpoint({ done: parked.length, seconds: busyMs / 1000 })
  }
  return parked
}

/**
 * Approves a parked run while following its stream from after the park:
 * the time from the approval to the stream's first chunk and to its end.
 */
export const approveAndFollow = async (
  base: string,
  key: string,
  run: ParkedRun
): Promise<{ firstChunkMs: number; doneMs: number }> => {
  const streamed = fetch(`${base}/v1/runs/${run.runId}/stream`, {
    headers: { authorization: `Bearer ${key}`, "last-event-id": String(run.lastEventId) }
  })
  const t0 = performance.now()
  const resolved = await fetch(`${base}/v1/interactions/${run.interactionId}/resolve`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ inputResponses: [{ requestId: run.interactionId, optionId: "approve" }] })
  })
  const answer = await resolved.text()
  if (resolved.status !== 200) throw new Error(`resolve answered ${resolved.status}: ${answer}`)
  const response = await streamed
  const firstChunkMs = performance.now() - t0
  const text = await response.text()
  const doneMs = performance.now() - t0
  if (!resumedProperly(text)) throw new Error(`the run ${run.runId} did not resume properly:\n${text.slice(0, 2000)}`)
  return { firstChunkMs, doneMs }
}
