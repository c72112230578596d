/**
 * The API calls the console makes, with the signed-in key on each, on this
 * page's own origin. A refusal becomes an ApiError carrying the service's
 * error envelope (its message is what the console shows); a network failure
 * stays the TypeError fetch throws.
 */

/** @typedef {import("../domain/Agent.ts").Agent} Agent */
/** @typedef {import("../domain/Thread.ts").Thread} Thread */
/** @typedef {import("../domain/Run.ts").Run} Run */
/** @typedef {import("../domain/Interaction.ts").Interaction} Interaction */
/** @typedef {import("../domain/Interaction.ts").ResolveInteractionBody} ResolveBody */
/** @typedef {import("../domain/Band.ts").BandStatus} BandStatus */
/**
 * @template A
 * @typedef {import("../domain/Page.ts").PageOf<A>} Page
 */

/** @typedef {{ type?: string, code?: string, message?: string, request_id?: string, details?: Record<string, unknown> }} ErrorBody */

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {ErrorBody} body
   */
  constructor(status, body) {
    super(body.message ?? `The service answered ${status}.`)
    this.status = status
    this.code = body.code ?? "http_error"
    this.requestId = body.request_id
    this.details = body.details ?? {}
  }
}

/** @param {Response} response */
const errorOf = async (response) => {
  const text = await response.text()
  try {
    const parsed = JSON.parse(text)
    if (typeof parsed === "object" && parsed !== null && typeof parsed.error === "object") {
      return new ApiError(response.status, parsed.error)
    }
  } catch {
    // not the envelope (a proxy's page): say what came back
  }
  return new ApiError(response.status, { message: `The service answered ${response.status} ${response.statusText}.` })
}

/** @param {Record<string, string | number | undefined>} query */
const search = (query) => {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value))
  const text = params.toString()
  return text === "" ? "" : `?${text}`
}

/** @param {string} key the API key */
export const createApi = (key) => {
  /**
   * @param {string} method
   * @param {string} path
   * @param {{ body?: unknown, headers?: Record<string, string>, signal?: AbortSignal }} [options]
   */
  const call = async (method, path, options = {}) => {
    /** @type {Record<string, string>} */
    const headers = { authorization: `Bearer ${key}`, ...options.headers }
    if (options.body !== undefined) headers["content-type"] = "application/json"
    const response = await fetch(path, {
      method,
      headers,
      body: options.body === undefined ? null : JSON.stringify(options.body),
      signal: options.signal ?? null
    })
    if (!response.ok) throw await errorOf(response)
    return response
  }
  /**
   * @template A
   * @param {string} method
   * @param {string} path
   * @param {unknown} [body]
   * @returns {Promise<A>}
   */
  const json = async (method, path, body) => (await call(method, path, body === undefined ? {} : { body })).json()

  return {
    /** @returns {Promise<Page<Agent>>} */
    agents: () => json("GET", `/v1/agents${search({ limit: 100 })}`),
    /** @param {{ context: string, band: string }} body @returns {Promise<Agent>} */
    createAgent: (body) => json("POST", "/v1/agents", body),
    /** @returns {Promise<Page<BandStatus>>} */
    bands: () => json("GET", "/v1/bands"),
    /** @param {string} agentId @returns {Promise<Page<Thread>>} */
    threads: (agentId) => json("GET", `/v1/threads${search({ agentId, limit: 100 })}`),
    /** @param {string} agentId @returns {Promise<Thread>} */
    createThread: (agentId) => json("POST", "/v1/threads", { agentId }),
    /** @param {string} threadId @returns {Promise<Page<Run>>} */
    runs: (threadId) => json("GET", `/v1/runs${search({ threadId, limit: 20 })}`),
    /** @param {string} runId @returns {Promise<Run>} */
    run: (runId) => json("GET", `/v1/runs/${runId}`),
    /** @param {string} runId @returns {Promise<Run>} */
    cancelRun: (runId) => json("POST", `/v1/runs/${runId}/cancel`),
    /** @returns {Promise<Page<Interaction>>} */
    pendingInteractions: () => json("GET", `/v1/interactions${search({ status: "pending", limit: 100 })}`),
    /** @param {string} id @param {ResolveBody} body @returns {Promise<Interaction>} */
    resolve: (id, body) => json("POST", `/v1/interactions/${id}/resolve`, body),
    /**
     * Sends a message: the answer is the run's stream (header Svc-Run-Id).
     * @param {string} threadId
     * @param {{ input: string, streamReasoning?: boolean }} body
     * @param {AbortSignal} signal
     */
    send: (threadId, body, signal) => call("POST", `/v1/threads/${threadId}/messages`, { body, signal }),
    /**
     * A run's stream, replayed from the start or after `lastEventId`.
     * @param {string} runId
     * @param {string | undefined} lastEventId
     * @param {AbortSignal} signal
     */
    stream: (runId, lastEventId, signal) =>
      call("GET", `/v1/runs/${runId}/stream`, {
        signal,
        headers: lastEventId === undefined ? {} : { "last-event-id": lastEventId }
      })
  }
}

/** @typedef {ReturnType<typeof createApi>} Api */
