/**
 * The conversation with one thread: its runs (newest first; choosing one
 * replays its stream, and follows it while it is going), a composer that
 * sends a message and follows the run it starts, live, to its end.
 */
import { agentName } from "./agents.js"
import { field, h, messageOf, replace, time } from "./dom.js"
import { RunView, statusBadge } from "./runView.js"
import { follow } from "./sse.js"

/** @typedef {import("./api.js").Api} Api */
/** @typedef {import("./api.js").Agent} Agent */
/** @typedef {import("./api.js").Thread} Thread */

export class ThreadPanel {
  /**
   * @param {Api} api
   * @param {{ onInputRequested: () => void, onRunEnded: (thread: Thread) => void }} listeners
   *   a run in view parked on a person; a run in view ended (the thread is idle again)
   */
  constructor(api, { onInputRequested, onRunEnded }) {
    this.api = api
    this.onInputRequested = onInputRequested
    this.onRunEnded = onRunEnded
    /** @type {Thread | undefined} */
    this.thread = undefined
    /** @type {AbortController | undefined} the stream being followed */
    this.following = undefined
    this.title = h("h2", {}, "Conversation")
    this.runList = h("ul", { class: "list runs", attrs: { "aria-label": "Runs" } })
    this.runHost = h("div", { class: "run-host" })
    this.error = h("p", { class: "error", attrs: { role: "alert", hidden: "" } })
    this.input = h("textarea", { attrs: { rows: "3", placeholder: "Write a message…" } })
    this.reasoning = h("input", { attrs: { type: "checkbox" } })
    this.sendButton = h("button", { attrs: { type: "submit" } }, "Send")
    const composer = h(
      "form",
      { class: "composer" },
      field("Message", this.input),
      h("label", { class: "choice" }, this.reasoning, " Stream reasoning"),
      this.sendButton
    )
    composer.addEventListener("submit", (event) => {
      event.preventDefault()
      void this.send()
    })
    this.element = h(
      "section",
      { class: "thread", attrs: { "aria-label": "Conversation", hidden: "" } },
      h("header", {}, this.title),
      h("details", { class: "runs", attrs: { open: "" } }, h("summary", {}, "Runs of this thread"), this.runList),
      this.runHost,
      composer,
      this.error
    )
  }

  /** @param {unknown} error */
  fail(error) {
    this.error.textContent = messageOf(error)
    this.error.hidden = false
  }

  /**
   * Shows a thread and its newest run.
   * @param {Thread} thread
   * @param {Agent} agent
   */
  async show(thread, agent) {
    this.thread = thread
    this.following?.abort()
    this.element.hidden = false
    this.error.hidden = true
    replace(this.title, "Thread ", h("code", {}, thread.id), ` with ${agentName(agent)}`)
    replace(this.runHost)
    const newest = await this.loadRuns()
    if (newest !== undefined && this.thread === thread) void this.watch(newest)
  }

  /** Lists the thread's runs; answers the newest one's id. */
  async loadRuns() {
    const thread = this.thread
    if (thread === undefined) return undefined
    try {
      const page = await this.api.runs(thread.id)
      replace(
        this.runList,
        page.data.length === 0 ? h("li", { class: "empty" }, "No runs yet.") : page.data.map((run) =>
          h(
            "li",
            {},
            h(
              "button",
              {
                class: "item",
                attrs: { type: "button", "data-run-id": run.id },
                on: { click: () => void this.watch(run.id) }
              },
              h("code", { class: "id" }, run.id),
              statusBadge(run.status),
              time(run.createdAt)
            )
          )
        )
      )
      return page.data[0]?.id
    } catch (error) {
      this.fail(error)
      return undefined
    }
  }

  /** Sends the composer's message and follows the run it starts; a refusal leaves the run in view as it is. */
  async send() {
    const thread = this.thread
    const text = this.input.value
    if (thread === undefined || text.trim() === "") return
    this.error.hidden = true
    const controller = new AbortController()
    this.sendButton.disabled = true
    /** @type {Response} */
    let response
    try {
      // Only `input` unless an option is chosen: a plain-text message to a busy thread is held as a follow-up.
      response = await this.api.send(thread.id, {
        input: text,
        ...(this.reasoning.checked ? { streamReasoning: true } : {})
      }, controller.signal)
    } catch (error) {
      // 409 thread_busy: the message may have been held as a follow-up or taken as an answer; the envelope says which.
      return this.fail(error)
    } finally {
      this.sendButton.disabled = false
    }
    this.input.value = ""
    this.following?.abort()
    this.following = controller
    void this.loadRuns()
    await this.watch(response.headers.get("svc-run-id") ?? "", { input: text, first: response, controller })
  }

  /** Stops following the current stream; answers the controller of the next one. */
  restart() {
    this.following?.abort()
    this.following = new AbortController()
    return this.following
  }

  /**
   * Follows a run's stream (from the start, or `first`, the answer to a message) to its end.
   * @param {string} runId
   * @param {{ input?: string, first?: Response, controller?: AbortController }} [options]
   */
  async watch(runId, options = {}) {
    const controller = options.controller ?? this.restart()
    const view = new RunView({
      runId,
      ...(options.input === undefined ? {} : { input: options.input }),
      onInputRequested: this.onInputRequested
    })
    const cancel = h("button", { class: "cancel", attrs: { type: "button" } }, "Cancel run")
    cancel.addEventListener(
      "click",
      () => void this.api.cancelRun(runId).catch((error) => view.notice(messageOf(error), "error"))
    )
    view.element.querySelector("header")?.append(cancel)
    replace(this.runHost, view.element)
    try {
      const outcome = await follow({
        ...(options.first === undefined ? {} : { first: options.first }),
        open: (lastEventId) => this.api.stream(runId, lastEventId, controller.signal),
        onChunk: (chunk) => view.apply(chunk),
        onConnection: (state) => view.connection(state),
        signal: controller.signal
      })
      if (outcome === "aborted") return
      cancel.remove()
      const run = await this.api.run(runId)
      view.showRun(run)
      await this.loadRuns()
      if (this.thread?.id === run.threadId) this.onRunEnded(this.thread)
    } catch (error) {
      if (!controller.signal.aborted) view.notice(messageOf(error), "error")
    }
  }
}
