/**
 * The pending-approvals inbox (spec 4.4): every pending interaction of the
 * workspace, newest first. An approval shows the tool, its input and preview
 * and is approved or denied (with an optional reason); a question shows its
 * prompts, options and actions and is answered or dismissed. Resolving
 * resumes the run; a refusal shows the service's message on the card.
 */
import { field, h, json, link, messageOf, replace, time } from "../dom.js"

/** @typedef {import("../api.js").Api} Api */
/** @typedef {import("../api.js").Interaction} Interaction */
/** @typedef {import("../api.js").ResolveBody} ResolveBody */
/** @typedef {import("../../domain/Interaction.ts").Question} Question */
/** @typedef {import("../../domain/Interaction.ts").InputResponse} InputResponse */

/** @param {Interaction} interaction */
const origin = (interaction) =>
  h(
    "p",
    { class: "meta" },
    "Run ",
    h("code", {}, interaction.runId),
    interaction.workerRef === null ? null : [" (worker ", h("code", {}, interaction.workerRef), ")"],
    " · step ",
    interaction.stepNumber,
    " · asked ",
    time(interaction.createdAt),
    interaction.expiresAt === null ? null : [" · expires ", time(interaction.expiresAt)],
    " · ",
    link(`#/threads/${interaction.threadId}`, "Open the conversation")
  )

/**
 * One question's controls, and how to read its answer.
 * @param {string} cardId
 * @param {Question} question
 * @returns {{ element: HTMLElement, answer: () => InputResponse | undefined }}
 */
const questionControls = (cardId, question) => {
  const options = question.options ?? []
  const name = `${cardId}-${question.id}`
  const choices = options.map((option) =>
    h("input", { attrs: { type: question.multiple ? "checkbox" : "radio", name, value: option.id } })
  )
  const freeText = question.multiline || question.allowOther || options.length === 0
  const text = !freeText
    ? undefined
    : question.multiline
    ? h("textarea", { attrs: { rows: "3" } })
    : h("input", { attrs: { type: "text" } })
  const element = h(
    "fieldset",
    { class: "question" },
    h("legend", {}, question.prompt ?? question.id),
    choices.map((input, i) => h("label", { class: "choice" }, input, ` ${options[i].label}`)),
    text === undefined ? null : field(options.length === 0 ? "Answer" : "Other", text)
  )
  const answer = () => {
    const chosen = choices.filter((input) => input.checked).map((input) => input.value)
    const written = text?.value.trim() ?? ""
    if (chosen.length === 0 && written === "") return undefined
    return {
      requestId: question.id,
      ...(chosen.length === 0 ? {} : question.multiple ? { optionIds: chosen } : { optionId: chosen[0] }),
      ...(written === "" ? {} : { text: written })
    }
  }
  return { element, answer }
}

export class Inbox {
  /**
   * @param {Api} api
   * @param {(pending: number) => void} [onCount] how many wait for a person now
   */
  constructor(api, onCount = () => undefined) {
    this.api = api
    this.onCount = onCount
    this.count = h("span", { class: "count" }, "0")
    this.list = h("div", { class: "cards" })
    this.error = h("p", { class: "error", attrs: { role: "alert", hidden: "" } })
    this.element = h(
      "section",
      { class: "inbox", attrs: { "aria-label": "Inbox" } },
      h(
        "header",
        {},
        h("h2", {}, "Inbox ", this.count),
        h("button", { attrs: { type: "button" }, on: { click: () => void this.refresh() } }, "Refresh")
      ),
      this.error,
      this.list
    )
    /** @type {Map<string, HTMLElement>} cards by interaction id, kept across refreshes (typed answers survive) */
    this.cards = new Map()
  }

  /** Reads the pending interactions again; cards of those still pending are kept as they are. */
  async refresh() {
    try {
      const page = await this.api.pendingInteractions()
      this.error.hidden = true
      const cards = page.data.map((interaction) => this.cards.get(interaction.id) ?? this.card(interaction))
      this.cards = new Map(page.data.map((interaction, i) => [interaction.id, cards[i]]))
      this.count.textContent = String(page.data.length) + (page.hasMore ? "+" : "")
      this.onCount(page.data.length)
      replace(this.list, cards.length === 0 ? h("p", { class: "empty" }, "Nothing waits for a person.") : cards)
    } catch (error) {
      this.error.textContent = messageOf(error)
      this.error.hidden = false
    }
  }

  /** @param {Interaction} interaction */
  card(interaction) {
    const status = h("p", { class: "card-status", attrs: { role: "status" } })
    const reason = h("input", { attrs: { type: "text", maxlength: "4000" } })
    /** @type {Array<HTMLButtonElement>} */
    const buttons = []
    /**
     * @param {string} label
     * @param {() => ResolveBody | string} body the request, or why it cannot be sent yet
     * @param {string} done
     */
    const action = (label, body, done) => {
      const button = h("button", { attrs: { type: "button" } }, label)
      button.addEventListener("click", () => void this.resolve(interaction.id, body, done, status, buttons))
      buttons.push(button)
      return button
    }
    const withReason = () => (reason.value.trim() === "" ? {} : { reason: reason.value.trim() })
    const article = h("article", {
      class: `interaction ${interaction.kind}`,
      attrs: {
        "data-interaction-id": interaction.id,
        "aria-label": interaction.kind === "question" ? "Question" : "Approval request"
      }
    })
    if (interaction.kind === "approval_request") {
      /** @param {"approve" | "deny"} optionId */
      const decide = (optionId) => () => ({
        inputResponses: [{ requestId: interaction.id, optionId }],
        ...withReason()
      })
      replace(
        article,
        h("h3", {}, "Approve ", h("code", {}, interaction.toolName), "?"),
        origin(interaction),
        interaction.reason === null ? null : h("p", { class: "hook-reason" }, `Reviewer: ${interaction.reason}`),
        h("h4", {}, "Input"),
        json(interaction.input, "Input"),
        interaction.preview === undefined ? null : [h("h4", {}, "Preview"), json(interaction.preview, "Preview")],
        field("Reason (optional)", reason),
        h(
          "div",
          { class: "actions" },
          action("Approve", decide("approve"), "Approved."),
          action("Deny", decide("deny"), "Denied.")
        ),
        status
      )
      return article
    }
    const request = interaction.request
    const controls = (request?.questions ?? []).map((question) => questionControls(interaction.id, question))
    const answer = () => {
      const responses = controls.flatMap((control) => control.answer() ?? [])
      return responses.length === 0
        ? "Answer at least one question, choose an action, or dismiss."
        : { inputResponses: responses, ...withReason() }
    }
    replace(
      article,
      h("h3", {}, request?.title ?? "Question"),
      origin(interaction),
      request?.details === undefined ? null : h("p", { class: "details" }, request.details),
      controls.map((control) => control.element),
      field("Reason (optional)", reason),
      h(
        "div",
        { class: "actions" },
        controls.length === 0 ? null : action("Send answer", answer, "Answered."),
        (request?.actions ?? []).map((choice) =>
          action(
            choice.label,
            () => ({ inputResponses: [{ requestId: choice.id }], ...withReason() }),
            `${choice.label}: sent.`
          )
        ),
        action("Dismiss", () => ({ cancel: true, ...withReason() }), "Dismissed.")
      ),
      status
    )
    return article
  }

  /**
   * @param {string} id
   * @param {() => ResolveBody | string} body
   * @param {string} done
   * @param {HTMLElement} status
   * @param {ReadonlyArray<HTMLButtonElement>} buttons
   */
  async resolve(id, body, done, status, buttons) {
    const request = body()
    status.classList.remove("error")
    if (typeof request === "string") {
      status.classList.add("error")
      status.textContent = request
      return
    }
    for (const button of buttons) button.disabled = true
    try {
      const resolved = await this.api.resolve(id, request)
      status.textContent = `${done} (${resolved.status})`
      status.closest("article")?.setAttribute("data-resolved", resolved.status)
      const pending = this.list.querySelectorAll("article:not([data-resolved])").length
      this.count.textContent = String(pending)
      this.onCount(pending)
    } catch (error) {
      for (const button of buttons) button.disabled = false
      status.classList.add("error")
      status.textContent = messageOf(error)
    }
  }
}
