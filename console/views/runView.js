/**
 * The live view of one run: it renders each chunk of the run's stream as it
 * arrives (text, reasoning, tool calls with their inputs and outputs, parks,
 * errors, usage) and, once the run is over, its terminal state. Everything
 * the model or a tool produced is placed as text (dom.js).
 */
import { h, json, replace } from "../dom.js"

/** @typedef {import("../../domain/Chunk.ts").Chunk} Chunk */
/** @typedef {import("../../domain/Run.ts").Run} Run */
/** @typedef {import("../../domain/Run.ts").UsageTotal} UsageTotal */
/** @typedef {import("../sse.js").Connection} Connection */

/** @param {string} status */
export const statusLabel = (status) => status.replaceAll("_", " ")

/** @param {string} status */
export const statusBadge = (status) =>
  h("span", { class: "status", attrs: { "data-status": status } }, statusLabel(status))

/** @param {UsageTotal} usage */
const usageList = (usage) =>
  h(
    "dl",
    { class: "usage", attrs: { "aria-label": "Usage" } },
    [
      ["Input tokens", usage.inputTokens],
      ["Output tokens", usage.outputTokens],
      ["Total tokens", usage.totalTokens],
      ["Cost (US cents)", usage.costCents],
      ["Steps", usage.steps]
    ].map(([term, value]) => h("div", {}, h("dt", {}, term), h("dd", {}, value)))
  )

/**
 * The output of a tool's expected failure (`{ type: "tool-output-error", error: { code, message, details? } }`), if it is one.
 * @param {unknown} output
 * @returns {import("../../domain/Chunk.ts").ToolFailureOutput | undefined}
 */
const toolFailure = (output) => {
  if (typeof output !== "object" || output === null || !("type" in output) || output.type !== "tool-output-error") {
    return undefined
  }
  const error = "error" in output ? output.error : undefined
  if (typeof error !== "object" || error === null) return undefined
  const code = "code" in error ? error.code : undefined
  const message = "message" in error ? error.message : undefined
  if (typeof code !== "string" || typeof message !== "string") return undefined
  const details = "details" in error && typeof error.details === "object" && error.details !== null
    ? /** @type {Record<string, unknown>} */ (error.details)
    : undefined
  return { type: "tool-output-error", error: details === undefined ? { code, message } : { code, message, details } }
}

const connectionText = { live: "live", parked: "waiting for a person", reconnecting: "reconnecting…" }

export class RunView {
  /**
   * @param {{ runId: string, input?: string, files?: ReadonlyArray<string>, onInputRequested: () => void, onStatus?: (status: string) => void }} options
   *   the user's message and the names of its files; a run parked on a person; the run's status changed
   */
  constructor({ runId, input, files = [], onInputRequested, onStatus }) {
    this.runId = runId
    this.onInputRequested = onInputRequested
    this.onStatus = onStatus
    this.status = statusBadge("running")
    this.connectionState = h("span", { class: "connection", attrs: { "aria-live": "polite" } })
    this.transcript = h(
      "div",
      { class: "transcript" },
      input === undefined ? null : h(
        "div",
        { class: "user" },
        h("strong", {}, "You"),
        h("p", {}, input),
        files.length === 0 ? null : h("p", { class: "meta" }, `Files: ${files.join(", ")}`)
      )
    )
    this.usage = h("div", { class: "usage-box" })
    this.terminal = h("section", { class: "terminal", attrs: { "aria-label": "Terminal state", hidden: "" } })
    this.element = h(
      "section",
      { class: "run", attrs: { "data-run-id": runId, "aria-label": "Run" } },
      h("header", {}, h("h3", {}, "Run ", h("code", {}, runId)), this.status, this.connectionState),
      this.transcript,
      this.usage,
      this.terminal
    )
    /** @type {HTMLElement | undefined} */
    this.step = undefined
    this.steps = 0
    this.parked = false
    this.resuming = false
    /** @type {Map<string, HTMLElement>} text and reasoning parts by id */
    this.parts = new Map()
    /** @type {Map<string, { card: HTMLElement, state: HTMLElement, input: HTMLElement, output: HTMLElement, note: HTMLElement }>} tool calls by id */
    this.tools = new Map()
    /** @type {HTMLElement | undefined} */
    this.progress = undefined
  }

  /** @param {Connection} state */
  connection(state) {
    this.connectionState.textContent = connectionText[state]
    this.connectionState.dataset["state"] = state
  }

  /** @param {string} status */
  setStatus(status) {
    this.status.textContent = statusLabel(status)
    this.status.dataset["status"] = status
    this.onStatus?.(status)
  }

  /** The current step's container (a chunk before any start-step opens one). */
  current() {
    if (this.step === undefined) this.openStep()
    return /** @type {HTMLElement} */ (this.step)
  }

  openStep() {
    this.steps += 1
    this.step = h(
      "section",
      { class: "step", attrs: { "aria-label": `Step ${this.steps}` } },
      h("h4", {}, `Step ${this.steps}`)
    )
    this.transcript.append(this.step)
  }

  /**
   * @param {string} text
   * @param {string} [kind]
   */
  notice(text, kind = "info") {
    this.current().append(h("p", { class: `notice ${kind}`, attrs: kind === "error" ? { role: "alert" } : {} }, text))
  }

  /**
   * The card of a tool call, made when first seen: its input, its outcome, and a note while it waits on a person.
   * @param {string} toolCallId
   * @param {string} [toolName]
   */
  tool(toolCallId, toolName = "tool") {
    const known = this.tools.get(toolCallId)
    if (known !== undefined) return known
    const state = h("span", { class: "tool-state" }, "preparing")
    const input = h("div", { class: "tool-input" })
    const output = h("div", { class: "tool-output" })
    const note = h("div", { class: "tool-note" })
    const card = h(
      "article",
      { class: "tool", attrs: { "data-tool-call-id": toolCallId, "aria-label": `Tool call ${toolName}` } },
      h("header", {}, h("strong", {}, toolName), " ", state, " ", h("code", { class: "id" }, toolCallId)),
      input,
      output,
      note
    )
    this.current().append(card)
    const entry = { card, state, input, output, note }
    this.tools.set(toolCallId, entry)
    return entry
  }

  /**
   * Sets a tool call's state and one of its parts (an outcome also clears the waiting note).
   * @param {string} toolCallId
   * @param {string} state
   * @param {"input" | "output" | "note"} slot
   * @param {...import("../dom.js").Child} content
   */
  toolState(toolCallId, state, slot, ...content) {
    const tool = this.tool(toolCallId)
    tool.state.textContent = state
    tool.card.dataset["state"] = state
    replace(tool[slot], ...content)
    if (slot === "output") replace(tool.note)
  }

  /**
   * A text or reasoning part, made when first seen.
   * @param {string} id
   * @param {"text" | "reasoning"} kind
   */
  part(id, kind) {
    const key = `${kind}:${id}`
    const known = this.parts.get(key)
    if (known !== undefined) return known
    const text = h("p", { class: kind })
    this.current().append(
      kind === "reasoning"
        ? h("details", { class: "reasoning", attrs: { open: "" } }, h("summary", {}, "Reasoning"), text)
        : text
    )
    this.parts.set(key, text)
    return text
  }

  clearProgress() {
    this.progress?.remove()
    this.progress = undefined
  }

  /** @param {Chunk} chunk */
  apply(chunk) {
    switch (chunk.type) {
      case "start":
        // A resumed run announces the parked step again: it goes on in that step.
        this.resuming = this.parked
        if (this.parked) this.notice("The run resumed.")
        this.parked = false
        this.setStatus("running")
        return
      case "start-step":
        if (this.resuming) return void (this.resuming = false)
        return this.openStep()
      case "finish-step":
        return
      case "reset-step": {
        // The step was cut short (its executor died): it is dropped and told again from its start.
        const step = this.current()
        for (const [key, element] of this.parts) if (step.contains(element)) this.parts.delete(key)
        for (const [key, tool] of this.tools) if (step.contains(tool.card)) this.tools.delete(key)
        step.remove()
        this.step = undefined
        this.steps -= 1
        this.transcript.append(h("p", { class: "notice" }, "A step was cut short; it is replayed from its start."))
        return
      }
      case "text-start":
        this.clearProgress()
        this.part(chunk.id, "text")
        return
      case "text-delta":
        this.part(chunk.id, "text").append(chunk.delta)
        return
      case "reasoning-start":
        this.part(chunk.id, "reasoning")
        return
      case "reasoning-delta":
        this.part(chunk.id, "reasoning").append(chunk.delta)
        return
      case "text-end":
      case "reasoning-end":
        return
      case "tool-input-start":
        this.tool(chunk.toolCallId, chunk.toolName)
        return
      case "tool-input-available":
        this.tool(chunk.toolCallId, chunk.toolName)
        return this.toolState(chunk.toolCallId, "running", "input", h("h5", {}, "Input"), json(chunk.input, "Input"))
      case "tool-output-available": {
        const failure = toolFailure(chunk.output)
        if (failure === undefined) {
          return this.toolState(chunk.toolCallId, "done", "output", h("h5", {}, "Output"), json(chunk.output, "Output"))
        }
        // An expected failure the model read: the call finished, and failed.
        return this.toolState(
          chunk.toolCallId,
          "failed",
          "output",
          h("h5", {}, "Error"),
          h("p", { class: "tool-error" }, `${failure.error.code}: ${failure.error.message}`),
          failure.error.details === undefined ? null : json(failure.error.details, "Details")
        )
      }
      case "tool-output-error":
        // The call never finished (the step ran past its time bound).
        return this.toolState(
          chunk.toolCallId,
          "failed",
          "output",
          h("h5", {}, "Error"),
          h("p", { class: "tool-error" }, chunk.errorText)
        )
      case "data-svc-tool-denied":
        return this.toolState(
          chunk.data.toolCallId,
          "denied",
          "output",
          h("p", { class: "tool-denied" }, "Denied: the tool did not run."),
          h("p", { class: "tool-denied-reason" }, `Reason: ${chunk.data.reason}`)
        )
      case "tool-output-denied":
        // Shown with its reason by data-svc-tool-denied, just before (a stream stored without it has none).
        if (this.tool(chunk.toolCallId).card.dataset["state"] === "denied") return
        return this.toolState(
          chunk.toolCallId,
          "denied",
          "output",
          h("p", { class: "tool-denied" }, "Denied: the tool did not run.")
        )
      case "data-svc-input-requested": {
        const question = chunk.data.request["kind"] === "question"
        this.parked = true
        this.setStatus(question ? "waiting_for_input" : "waiting_for_approval")
        this.toolState(
          chunk.data.toolCallId,
          question ? "waiting for an answer" : "waiting for approval",
          "note",
          h(
            "p",
            { class: "waiting" },
            question ? "Waiting for your answer: see the inbox." : "Waiting for approval: see the inbox."
          )
        )
        return this.onInputRequested()
      }
      case "data-svc-progress":
        if (this.progress === undefined) {
          this.progress = h("p", { class: "progress", attrs: { "aria-live": "polite" } })
          this.current().append(this.progress)
        }
        this.progress.textContent = chunk.data.text
        return
      case "data-svc-followup-replayed":
        return this.notice(`Follow-up delivered: ${chunk.data.text}`)
      case "data-svc-task":
        return this.notice(`Delegated task "${chunk.data.label}" (${chunk.data.role}, ${chunk.data.workerRef}).`)
      case "data-svc-worker-meta":
        return
      case "data-svc-tool-result-overflow":
        return this.current().append(
          h(
            "div",
            { class: "notice warning" },
            `The result of ${chunk.data.toolName} was too large (${chunk.data.bytes} bytes):`,
            json(chunk.data)
          )
        )
      case "data-svc-http-connection-unavailable":
        return this.notice(
          `HTTP connection ${chunk.data.name} is unavailable (${chunk.data.errorCode}): ${chunk.data.message}`,
          "warning"
        )
      case "data-svc-terminal":
        this.terminalReason = chunk.data.terminalReason
        if (chunk.data.output !== undefined) {
          this.terminal.append(h("h4", {}, "Structured output"), json(chunk.data.output, "Structured output"))
        }
        return
      case "data-svc-usage":
        return replace(this.usage, h("h4", {}, "Usage"), usageList(chunk.data))
      case "error":
        return this.notice(chunk.errorText, "error")
      case "finish":
        this.clearProgress()
        if (chunk.finishReason !== "other") this.setStatus(chunk.finishReason === "error" ? "failed" : "completed")
        return
      case "abort":
        this.clearProgress()
        return this.setStatus("cancelled")
    }
  }

  /**
   * The run's terminal state, as the Run resource has it.
   * @param {Run} run
   */
  showRun(run) {
    this.setStatus(run.status)
    this.connectionState.textContent = ""
    const reason = run.terminalReason ?? null
    this.terminal.prepend(
      h(
        "p",
        { class: "outcome", attrs: { "data-status": run.status } },
        `Run ${statusLabel(run.status)}`,
        reason === null ? "." : ` (${reason}).`,
        run.error === undefined
          ? null
          : h("span", { class: "run-error", attrs: { role: "alert" } }, ` ${run.error.code}: ${run.error.message}`)
      )
    )
    if (run.usage !== undefined && this.usage.childElementCount === 0) {
      replace(this.usage, h("h4", {}, "Usage"), usageList(run.usage))
    }
    this.terminal.hidden = false
  }
}
