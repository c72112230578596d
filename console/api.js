/**
 * The API calls the console makes, with the signed-in key on each, on this
 * page's own origin. A refusal becomes an ApiError carrying the service's
 * error envelope (its message is what the console shows); a network failure
 * stays the TypeError fetch throws.
 */

/** @typedef {import("../domain/Agent.ts").Agent} Agent */
/** @typedef {import("../domain/Thread.ts").Thread} Thread */
/** @typedef {import("../domain/Run.ts").Run} Run */
/** @typedef {import("../domain/ThreadMessage.ts").ThreadMessage} ThreadMessage */
/** @typedef {import("../domain/ThreadMessage.ts").MessagePart} MessagePart */
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

  /**
   * @param {string} path
   * @param {Record<string, string | number | undefined>} [query]
   */
  const get = (path, query = {}) => json("GET", path + search(query))

  return {
    get,
    /**
     * Any JSON call (the resource views' create, update, delete and actions).
     * @param {string} method
     * @param {string} path
     * @param {unknown} [body]
     * @returns {Promise<unknown>}
     */
    request: (method, path, body) => json(method, path, body),
    /** @returns {Promise<Page<Agent>>} */
    agents: () => get("/v1/agents", { limit: 100 }),
    /** @param {string} id @returns {Promise<Agent>} */
    agent: (id) => get(`/v1/agents/${id}`),
    /** @param {unknown} body @returns {Promise<{ valid: true }>} */
    validateAgent: (body) => json("POST", "/v1/agents/validate", body),
    /** @param {unknown} body @returns {Promise<Agent>} */
    createAgent: (body) => json("POST", "/v1/agents", body),
    /** @param {string} id @param {unknown} body @returns {Promise<Agent>} */
    updateAgent: (id, body) => json("PATCH", `/v1/agents/${id}`, body),
    /** @param {string} id @returns {Promise<unknown>} */
    deleteAgent: (id) => json("DELETE", `/v1/agents/${id}`),
    /** @returns {Promise<Page<BandStatus>>} */
    bands: () => get("/v1/bands"),
    /** @param {string} agentId @returns {Promise<Page<Thread>>} */
    threads: (agentId) => get("/v1/threads", { agentId, limit: 50 }),
    /** @param {string} id @returns {Promise<Thread>} */
    thread: (id) => get(`/v1/threads/${id}`),
    /** @param {string} agentId @returns {Promise<Thread>} */
    createThread: (agentId) => json("POST", "/v1/threads", { agentId }),
    /** @param {string} id @returns {Promise<unknown>} */
    deleteThread: (id) => json("DELETE", `/v1/threads/${id}`),
    /**
     * A page of the thread's conversation, oldest first.
     * @param {string} threadId
     * @param {{ limit?: number, cursor?: string }} [page]
     * @returns {Promise<Page<ThreadMessage>>}
     */
    messages: (threadId, page = {}) => get(`/v1/threads/${threadId}/messages`, { limit: 100, ...page }),
    /**
     * One folder of the thread's managed workspace (`""`: its root), a page at a time.
     * @param {string} threadId
     * @param {string} path
     * @param {string} [cursor]
     * @returns {Promise<Page<import("../domain/WorkspaceEntry.ts").WorkspaceEntry>>}
     */
    workspaceFiles: (threadId, path, cursor) =>
      get(`/v1/threads/${threadId}/workspace/files`, { path, limit: 100, cursor }),
    /**
     * Runs, newest first.
     * @param {{ threadId?: string, agentId?: string, status?: string, createdSince?: string, cursor?: string, limit?: number }} query
     * @returns {Promise<Page<Run>>}
     */
    runs: (query) => get("/v1/runs", { limit: 20, ...query }),
    /** @param {string} runId @returns {Promise<Run>} */
    run: (runId) => get(`/v1/runs/${runId}`),
    /** @param {string} runId @returns {Promise<Run>} */
    cancelRun: (runId) => json("POST", `/v1/runs/${runId}/cancel`),
    /** @returns {Promise<Page<Interaction>>} */
    pendingInteractions: () => get("/v1/interactions", { status: "pending", limit: 100 }),
    /** @param {string} id @param {ResolveBody} body @returns {Promise<Interaction>} */
    resolve: (id, body) => json("POST", `/v1/interactions/${id}/resolve`, body),
    /**
     * Sends a message: the answer is the run's stream (header Svc-Run-Id).
     * @param {string} threadId
     * @param {{ input: string | { text?: string, attachments: Array<{ fileId: string }> }, streamReasoning?: boolean }} body
     * @param {AbortSignal} signal
     */
    send: (threadId, body, signal) => call("POST", `/v1/threads/${threadId}/messages`, { body, signal }),
    /**
     * Uploads a file to attach to a message.
     * @param {File} file
     * @returns {Promise<{ id: string, filename: string }>}
     */
    upload: async (file) => {
      const form = new FormData()
      form.append("file", file)
      const response = await fetch("/v1/files", {
        method: "POST",
        headers: { authorization: `Bearer ${key}` },
        body: form
      })
      if (!response.ok) throw await errorOf(response)
      return response.json()
    },
    /**
     * The bytes of a file or an artifact (a path of this service), as a Blob.
     * @param {string} path
     */
    blob: async (path) => (await call("GET", path)).blob(),
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
