/**
 * A run's stream in the browser. EventSource cannot send an Authorization
 * header, so the stream is read with fetch: `frames` parses Server-Sent Events
 * from the response body as bytes arrive, and `follow` reads a run to its end
 * through disconnects (resumed with Last-Event-ID) and parks (a turn that
 * ends waiting on a person is followed on: the service holds the stream open
 * until the run resumes).
 */

/** @typedef {import("../domain/Chunk.ts").Chunk} Chunk */
/** @typedef {{ readonly id: string | undefined, readonly data: string }} Frame */
/** @typedef {"live" | "parked" | "reconnecting"} Connection */

/**
 * The frames of an SSE body, in order (comments and unknown fields skipped).
 * @param {ReadableStream<Uint8Array>} body
 * @returns {AsyncGenerator<Frame>}
 */
export async function* frames(body) {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let buffer = ""
  /** @type {string | undefined} */
  let id
  /** @type {Array<string>} */
  let data = []
  try {
    while (true) {
      const { done, value } = await reader.read()
      if (done) return
      buffer += decoder.decode(value, { stream: true })
      let end
      while ((end = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, end).replace(/\r$/, "")
        buffer = buffer.slice(end + 1)
        if (line === "") {
          if (data.length > 0) yield { id, data: data.join("\n") }
          id = undefined
          data = []
          continue
        }
        const colon = line.indexOf(":")
        if (colon === 0) continue
        const name = colon < 0 ? line : line.slice(0, colon)
        const field = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "")
        if (name === "data") data.push(field)
        else if (name === "id") id = field
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined)
  }
}

/**
 * After this chunk nothing more comes: the run ended (a parked turn ends with finish 'other').
 * @param {Chunk} chunk
 */
export const isFinalEnd = (chunk) =>
  chunk.type === "abort" || (chunk.type === "finish" && chunk.finishReason !== "other")

/** Waits before the next attempt after a read that brought nothing new (milliseconds). */
const backoff = [0, 250, 1000, 2000, 5000]

/**
 * @param {number} ms
 * @param {AbortSignal} signal
 * @returns {Promise<void>}
 */
const pause = (ms, signal) =>
  new Promise((resolve) => {
    if (ms === 0 || signal.aborted) return resolve()
    const timer = setTimeout(resolve, ms)
    signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true })
  })

/**
 * @param {string} data
 * @returns {Chunk}
 */
const chunkOf = (data) => {
  try {
    return JSON.parse(data)
  } catch {
    return { type: "error", errorText: "The console could not read a frame of the stream." }
  }
}

/**
 * Worth another attempt: the network failed (fetch throws a TypeError), the
 * service was busy (429) or failed (5xx). Any other refusal is final.
 * @param {unknown} error
 */
const retryable = (error) => {
  const status = typeof error === "object" && error !== null && "status" in error ? Number(error.status) : undefined
  return status === undefined ? error instanceof TypeError : status === 429 || status >= 500
}

/**
 * Follows a run's stream until the run ends or `signal` aborts. `first` is a
 * response already open on it (the answer to a message); later connections
 * come from `open` with the id of the last frame read. A failure retrying
 * cannot fix (a 4xx other than 429), or one of `onChunk`, is thrown.
 * @param {{
 *   first?: Response,
 *   open: (lastEventId: string | undefined) => Promise<Response>,
 *   onChunk: (chunk: Chunk) => void,
 *   onConnection: (state: Connection) => void,
 *   signal: AbortSignal
 * }} options
 * @returns {Promise<"ended" | "aborted">}
 */
export const follow = async ({ first, open, onChunk, onConnection, signal }) => {
  /** @type {string | undefined} */
  let lastEventId
  let response = first
  let idle = 0
  while (!signal.aborted) {
    let progressed = false
    let done = false
    let ended = false
    let rendering = false
    try {
      response ??= await open(lastEventId)
      if (response.body === null) throw new TypeError("the stream has no body")
      onConnection("live")
      for await (const frame of frames(response.body)) {
        if (frame.data === "[DONE]") {
          done = true
          break
        }
        if (frame.id !== undefined) lastEventId = frame.id
        const chunk = chunkOf(frame.data)
        progressed = true
        rendering = true
        onChunk(chunk)
        rendering = false
        ended = isFinalEnd(chunk)
      }
    } catch (error) {
      if (signal.aborted) return "aborted"
      if (rendering || !retryable(error)) throw error
    }
    response = undefined
    if (ended) return "ended"
    idle = progressed ? 0 : idle + 1
    // [DONE] without an end: the turn parked; otherwise the connection dropped (or the service stopped).
    onConnection(done ? "parked" : "reconnecting")
    await pause(backoff[Math.min(idle, backoff.length - 1)], signal)
  }
  return "aborted"
}
