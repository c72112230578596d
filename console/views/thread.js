/**
 * The conversation with one thread: every turn so far (from
 * `GET /v1/threads/:id/messages`: the user's messages with their files, the
 * assistant's text, tool calls, approvals, denials), each turn's run state,
 * the run still going followed live (a turn waiting on a person says so), and
 * a composer whose message appends a new turn and follows it to its end.
 */
import { confirmDialog, field, h, messageOf, replace } from "../dom.js"
import { agentName, firstLine, messageText, threadName } from "../names.js"
import { follow } from "../sse.js"
import { FilesPanel } from "./files.js"
import { chunksOf, filesOf, turnsOf } from "./history.js"
import { RunView, statusBadge, statusLabel } from "./runView.js"

/** @typedef {import("../api.js").Api} Api */
/** @typedef {import("../api.js").Agent} Agent */
/** @typedef {import("../api.js").Thread} Thread */
/** @typedef {import("../api.js").Run} Run */
/** @typedef {import("../api.js").ThreadMessage} ThreadMessage */

const terminal = ["completed", "failed", "cancelled"]

export class ThreadPanel {
  /**
   * @param {Api} api
   * @param {{ onInputRequested: () => void, onChanged: (thread: Thread) => void, onNamed: (threadId: string, name: string) => void }} listeners
   *   a run in view parked on a person; the thread's state changed (a run ended, a rename, a delete); its name is known
   */
  constructor(api, { onInputRequested, onChanged, onNamed }) {
    this.api = api
    this.onInputRequested = onInputRequested
    this.onChanged = onChanged
    this.onNamed = onNamed
    /** @type {Thread | undefined} */
    this.thread = undefined
    /** @type {Agent | undefined} */
    this.agent = undefined
    /** @type {AbortController | undefined} the stream being followed */
    this.following = undefined
    this.title = h("h2", {}, "Conversation")
    this.status = statusBadge("idle")
    this.transcript = h("div", { class: "turns" })
    this.files = new FilesPanel(api)
    this.error = h("p", { class: "error", attrs: { role: "alert", hidden: "" } })
    this.input = h("textarea", { attrs: { rows: "3", placeholder: "Write a message… (Ctrl+Enter sends)" } })
    this.attach = h("input", { attrs: { type: "file", multiple: "" } })
    this.reasoning = h("input", { attrs: { type: "checkbox" } })
    this.sendButton = h("button", { attrs: { type: "submit" } }, "Send")
    const composer = h(
      "form",
      { class: "composer" },
      field("Message", this.input),
      field("Attach files", this.attach),
      h("label", { class: "choice" }, this.reasoning, " Stream reasoning"),
      this.sendButton
    )
    composer.addEventListener("submit", (event) => {
      event.preventDefault()
      void this.send()
    })
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) composer.requestSubmit()
    })
    const rename = h("button", { attrs: { type: "button" }, on: { click: () => void this.rename() } }, "Rename")
    const remove = h(
      "button",
      { class: "danger", attrs: { type: "button" }, on: { click: () => void this.remove() } },
      "Delete thread"
    )
    this.element = h(
      "section",
      { class: "thread", attrs: { "aria-label": "Conversation", hidden: "" } },
      h("header", {}, this.title, this.status, h("span", { class: "tools" }, rename, remove)),
      this.files.element,
      this.transcript,
      composer,
      this.error
    )
  }

  /** @param {unknown} error */
  fail(error) {
    this.error.textContent = messageOf(error)
    this.error.hidden = false
  }

  /** @param {string} status the thread's state as the reader sees it (a parked run's, else the thread's) */
  setStatus(status) {
    this.status.textContent = statusLabel(status)
    this.status.dataset["status"] = status
  }

  /**
   * Shows a thread: its whole conversation, the run still going followed live.
   * @param {Thread} thread
   * @param {Agent} agent
   */
  async show(thread, agent) {
    this.thread = thread
    this.agent = agent
    this.following?.abort()
    this.element.hidden = false
    this.error.hidden = true
    replace(this.transcript)
    try {
      const messages = await this.messages(thread.id)
      const runs = new Map(
        (await this.api.runs({ threadId: thread.id, limit: 100 })).data.map((r) => [String(r.id), r])
      )
      if (this.thread !== thread) return
      const name = threadName(thread, messages[0])
      if (messages.length > 0) this.onNamed(thread.id, name)
      replace(
        this.title,
        name,
        " ",
        h("code", {}, thread.id),
        h("span", { class: "meta" }, ` with ${agentName(agent)}`)
      )
      this.files.show(thread, filesOf(messages))
      const turns = turnsOf(messages)
      for (const turn of turns) {
        const run = runs.get(turn.runId)
        const user = turn.user
        const view = this.addTurn(
          turn.runId,
          user === undefined ? undefined : messageText(user),
          filesOf(user === undefined ? [] : [user]).map((f) => f.name)
        )
        if (run !== undefined && !terminal.includes(run.status) && turn === turns.at(-1)) {
          void this.watch(view)
          continue
        }
        for (const chunk of chunksOf(turn.assistant?.parts ?? [])) view.apply(chunk)
        if (run !== undefined) view.showRun(run)
      }
      // The thread's own state; a run followed live says when it waits on a person.
      this.setStatus(thread.status)
      if (turns.length === 0) {
        this.transcript.append(h("p", { class: "empty" }, "No messages yet: write the first one below."))
      }
      this.transcript.lastElementChild?.scrollIntoView({ block: "end" })
    } catch (error) {
      this.fail(error)
    }
  }

  /**
   * The thread's whole conversation, oldest first (every page).
   * @param {string} threadId
   */
  async messages(threadId) {
    /** @type {Array<ThreadMessage>} */
    const messages = []
    let cursor
    do {
      const page = await this.api.messages(threadId, cursor === undefined ? {} : { cursor })
      messages.push(...page.data)
      cursor = page.hasMore && page.nextCursor !== null ? page.nextCursor : undefined
    } while (cursor !== undefined)
    return messages
  }

  /**
   * Appends a turn to the conversation.
   * @param {string} runId
   * @param {string | undefined} text the user's message
   * @param {ReadonlyArray<string>} files the names of its files
   */
  addTurn(runId, text, files) {
    this.transcript.querySelector(":scope > .empty")?.remove()
    const view = new RunView({
      runId,
      ...(text === undefined ? {} : { input: text }),
      files,
      onInputRequested: this.onInputRequested,
      onStatus: (status) => {
        const thread = this.thread
        if (thread === undefined) return
        this.setStatus(status)
        // The thread's list says it waits on a person too.
        if (status.startsWith("waiting")) this.onChanged(thread)
      }
    })
    this.transcript.append(view.element)
    return view
  }

  /** Sends the composer's message (with its files) and follows the run it starts as a new turn. */
  async send() {
    const thread = this.thread
    const text = this.input.value
    const chosen = [...(this.attach.files ?? [])]
    if (thread === undefined || (text.trim() === "" && chosen.length === 0)) return
    this.error.hidden = true
    const controller = new AbortController()
    this.sendButton.disabled = true
    /** @type {Response} */
    let response
    try {
      const attachments = await Promise.all(chosen.map((file) => this.api.upload(file).then((f) => ({ fileId: f.id }))))
      // Only `input` unless an option is chosen: a plain-text message to a busy thread is held as a follow-up.
      response = await this.api.send(thread.id, {
        input: attachments.length === 0 ? text : { ...(text.trim() === "" ? {} : { text }), attachments },
        ...(this.reasoning.checked ? { streamReasoning: true } : {})
      }, controller.signal)
    } catch (error) {
      // 409 thread_busy: the message may have been held as a follow-up or taken as an answer; the envelope says which.
      return this.fail(error)
    } finally {
      this.sendButton.disabled = false
    }
    this.input.value = ""
    this.attach.value = ""
    this.following?.abort()
    this.following = controller
    if (this.transcript.querySelector(".run") === null && thread.metadata["name"] === undefined) {
      const name = firstLine(text) || "Thread with files"
      this.title.firstChild?.replaceWith(name)
      this.onNamed(thread.id, name)
    }
    const view = this.addTurn(response.headers.get("svc-run-id") ?? "", text, chosen.map((f) => f.name))
    view.element.scrollIntoView({ block: "start" })
    await this.watch(view, { first: response, controller })
  }

  /**
   * Follows a turn's run (from the start of its stream, or `first`, the answer to a message) to its end.
   * @param {RunView} view
   * @param {{ first?: Response, controller?: AbortController }} [options]
   */
  async watch(view, options = {}) {
    const runId = view.runId
    if (options.controller === undefined) this.following?.abort()
    const controller = options.controller ?? new AbortController()
    this.following = controller
    const cancel = h("button", { class: "cancel", attrs: { type: "button" } }, "Cancel run")
    cancel.addEventListener(
      "click",
      () => void this.api.cancelRun(runId).catch((error) => view.notice(messageOf(error), "error"))
    )
    view.element.querySelector("header")?.append(cancel)
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
      view.showRun(await this.api.run(runId))
      const thread = this.thread
      if (thread !== undefined && this.following === controller) {
        this.thread = await this.api.thread(thread.id)
        this.setStatus(this.thread.status)
        this.files.show(this.thread, filesOf(await this.messages(thread.id)))
        this.onChanged(this.thread)
      }
    } catch (error) {
      if (!controller.signal.aborted) view.notice(messageOf(error), "error")
    }
  }

  async rename() {
    const thread = this.thread
    if (thread === undefined) return
    const input = h("input", { attrs: { type: "text", autocomplete: "off" } })
    input.value = thread.metadata["name"] ?? ""
    if (!(await confirmDialog("Rename this thread", "Rename", field("Thread name", input)))) return
    try {
      const name = input.value.trim()
      await this.api.request("PATCH", `/v1/threads/${thread.id}`, { metadata: { name: name === "" ? null : name } })
      const renamed = await this.api.thread(thread.id)
      this.onChanged(renamed)
      if (this.agent !== undefined) await this.show(renamed, this.agent)
    } catch (error) {
      this.fail(error)
    }
  }

  async remove() {
    const thread = this.thread
    if (thread === undefined) return
    if (!(await confirmDialog("Delete this thread and its runs?", "Delete"))) return
    try {
      await this.api.deleteThread(thread.id)
      this.following?.abort()
      this.element.hidden = true
      this.thread = undefined
      this.onChanged(thread)
    } catch (error) {
      this.fail(error)
    }
  }
}
