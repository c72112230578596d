/**
 * The service's API as the benchmarks call it: JSON requests with an API key,
 * and one streamed turn (`POST /v1/threads/:id/messages` read to
 * `data: [DONE]`), checked: status 200, `[DONE]` at the end, no error chunk,
 * the expected text.
 */
import { explain } from "./Lifecycle.ts"

export const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

export const api = async (
  base: string,
  key: string,
  method: string,
  path: string,
  body?: unknown
): Promise<Record<string, unknown>> => {
  let response: Response
  let text: string
  try {
    response = await fetch(base + path, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { "content-type": "application/json" })
      },
      body: body === undefined ? null : JSON.stringify(body)
    })
    text = await response.text()
  } catch (e) {
    throw new Error(`${method} ${path} failed: ${explain(e)}`)
  }
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`)
  const json: unknown = JSON.parse(text)
  if (!isRecord(json)) throw new Error(`${method} ${path} answered a non-object: ${text}`)
  return json
}

export const idOf = (resource: Record<string, unknown>): string => {
  const id = resource["id"]
  if (typeof id !== "string") throw new Error(`no id in ${JSON.stringify(resource)}`)
  return id
}

export interface Scenario {
  readonly name: string
  readonly input: string
  /** Every turn's stream must contain this. */
  readonly expect: string
}

export interface TurnResult {
  readonly ok: boolean
  readonly latencyMs: number
  readonly ttfcMs: number
  readonly error?: string
}

const failureMarkers = ["\"type\":\"error\"", "\"tool-output-error\"", "\"finishReason\":\"error\""]

/** One streamed turn on a thread, read to its end and checked. */
export const turn = async (base: string, key: string, threadId: string, scenario: Scenario): Promise<TurnResult> => {
  const started = performance.now()
  let ttfc = Number.NaN
  try {
    const response = await fetch(`${base}/v1/threads/${threadId}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ input: scenario.input })
    })
    let text = ""
    if (response.body !== null) {
      const decoder = new TextDecoder()
      for await (const bytes of response.body) {
        text += decoder.decode(bytes, { stream: true })
        if (Number.isNaN(ttfc) && /(^|\n)data:/.test(text)) ttfc = performance.now() - started
      }
      text += decoder.decode()
    }
    const latencyMs = performance.now() - started
    const describe = (why: string) => `${why}; status ${response.status}, body:\n${text}`
    if (response.status !== 200) return { ok: false, latencyMs, ttfcMs: ttfc, error: describe("not 200") }
    if (!text.endsWith("data: [DONE]\n\n")) {
      return { ok: false, latencyMs, ttfcMs: ttfc, error: describe("no data: [DONE] at the end") }
    }
    const marker = failureMarkers.find((m) => text.includes(m))
    if (marker !== undefined) {
      return { ok: false, latencyMs, ttfcMs: ttfc, error: describe(`stream contains ${marker}`) }
    }
    if (!text.includes(scenario.expect)) {
      return { ok: false, latencyMs, ttfcMs: ttfc, error: describe(`stream lacks ${scenario.expect}`) }
    }
    return { ok: true, latencyMs, ttfcMs: ttfc }
  } catch (e) {
    return { ok: false, latencyMs: performance.now() - started, ttfcMs: ttfc, error: `request failed: ${explain(e)}` }
  }
}
