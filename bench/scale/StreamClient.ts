/**
 * The client side of the streams benchmark, a process of its own so that
 * holding thousands of connections does not load the process that measures:
 * `node bench/scale/StreamClient.ts <base url> <api key>`, driven over IPC
 * (StreamProtocol.ts). Each stream is one raw `node:http` request on its own
 * connection (no agent pooling), its body kept as text.
 */
import { type ClientRequest, request } from "node:http"
import { type Command, decodeCommand, type Reply, resumedProperly } from "./StreamProtocol.ts"

const [base = "", key = ""] = process.argv.slice(2)

interface Held {
  readonly req: ClientRequest
  text: string
  firstDataAt: number | undefined
  ended: boolean
  failed: string | undefined
  /** Resolves when the stream ends or fails. */
  readonly finished: Promise<void>
}

const streams = new Map<string, Held>()

const send = (reply: Reply) => process.send?.(reply)

const open = (runId: string, lastEventId: number): Promise<void> =>
  new Promise((written) => {
    let finish: () => void = () => {}
    const finished = new Promise<void>((resolve) => (finish = resolve))
    const req = request(`${base}/v1/runs/${runId}/stream`, {
      agent: false,
      headers: { authorization: `Bearer ${key}`, "last-event-id": String(lastEventId) }
    })
    const held: Held = { req, text: "", firstDataAt: undefined, ended: false, failed: undefined, finished }
    streams.set(runId, held)
    req.on("response", (res) => {
      if (res.statusCode !== 200) held.failed = `status ${res.statusCode}`
      res.setEncoding("utf8")
      res.on("data", (d: string) => {
        held.firstDataAt ??= performance.now()
        held.text += d
      })
      res.on("end", () => {
        held.ended = true
        finish()
      })
      res.on("error", (e) => {
        held.failed ??= e.message
        finish()
      })
    })
    req.on("error", (e) => {
      held.failed ??= e.message
      finish()
      written()
    })
    req.end(() => written())
  })

const openAll = async (
  runs: ReadonlyArray<{ readonly runId: string; readonly lastEventId: number }>,
  concurrency: number
) => {
  const t0 = performance.now()
  let next = 0
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, async () => {
    while (next < runs.length) {
      const run = runs[next++]
      await open(run.runId, run.lastEventId)
    }
  }))
  send({ type: "opened", sent: runs.length, ms: performance.now() - t0 })
}

const resolveAll = async (runs: ReadonlyArray<{ readonly runId: string; readonly interactionId: string }>) => {
  const firstChunkMs: Array<number> = []
  const doneMs: Array<number> = []
  let bad = 0
  let firstError: string | undefined
  for (const run of runs) {
    const held = streams.get(run.runId)
    const t0 = performance.now()
    const response = await fetch(`${base}/v1/interactions/${run.interactionId}/resolve`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ inputResponses: [{ requestId: run.interactionId, optionId: "approve" }] })
    })
    const body = await response.text()
    if (held === undefined || response.status !== 200) {
      bad++
      firstError ??= held === undefined
        ? `no stream open for ${run.runId}`
        : `resolve answered ${response.status}: ${body}`
      continue
    }
    await Promise.race([held.finished, new Promise((resolve) => setTimeout(resolve, 60_000))])
    if (held.firstDataAt !== undefined) firstChunkMs.push(held.firstDataAt - t0)
    doneMs.push(performance.now() - t0)
    if (!resumedProperly(held.text)) {
      bad++
      firstError ??= `stream of ${run.runId}: ${held.failed ?? ""}\n${held.text.slice(0, 2000)}`
    }
    streams.delete(run.runId)
  }
  send({ type: "resolved", firstChunkMs, doneMs, bad, ...(firstError === undefined ? {} : { firstError }) })
}

const census = () => {
  let waiting = 0
  let ended = 0
  let failed = 0
  let firstError: string | undefined
  for (const held of streams.values()) {
    if (held.failed !== undefined) {
      failed++
      firstError ??= held.failed
    } else if (held.ended) ended++
    else waiting++
  }
  send({ type: "census", waiting, ended, failed, ...(firstError === undefined ? {} : { firstError }) })
}

const handle = (command: Command) => {
  switch (command.type) {
    case "open":
      return openAll(command.runs, command.concurrency)
    case "resolve":
      return resolveAll(command.runs)
    case "census":
      return census()
    case "close":
      for (const held of streams.values()) held.req.destroy()
      streams.clear()
      return send({ type: "closed" })
  }
}

process.on("message", (message: unknown) => void handle(decodeCommand(message)))
process.on("disconnect", () => process.exit(0))
send({ type: "ready" })
