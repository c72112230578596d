/**
 * One view per registration kind (tool servers, HTTP connections, secrets,
 * approval hooks, result handlers; resourceSpecs.js says which fields): the
 * list, a form to create or edit one (the service's field errors shown next
 * to the fields), Delete after a confirmation (a refusal such as 409
 * `resource_in_use` shown as the service words it), and the kind's actions:
 * Test shows what the service answered, Rotate asks for the new write-only value.
 */
import { confirmDialog, field, h, replace, statusOf, time } from "../dom.js"
import { Form } from "./form.js"
import { isRecord } from "./paths.js"

/** @typedef {import("../api.js").Api} Api */
/** @typedef {import("./resourceSpecs.js").ResourceSpec} ResourceSpec */
/** @typedef {import("./resourceSpecs.js").Action} Action */
/** @typedef {Record<string, unknown> & { id: string, name?: string, metadata?: Record<string, string> }} Item */

/** @param {unknown} value */
const cell = (
  value
) => (value === undefined || value === null ? "-" : typeof value === "object" ? JSON.stringify(value) : String(value))

/**
 * What an action answered, as one line (`connected: true · toolCount: 3 · tools: mcp__x__a, mcp__x__b`).
 * @param {Record<string, unknown>} answer
 */
const summary = (answer) =>
  Object.entries(answer).map(([key, value]) =>
    `${key}: ${
      Array.isArray(value)
        ? value.map((v) => (isRecord(v) ? String(v["namespacedName"] ?? v["name"] ?? JSON.stringify(v)) : String(v)))
          .join(", ")
        : cell(value)
    }`
  ).join(" · ")

export class ResourceView {
  /** @param {Api} api @param {ResourceSpec} spec */
  constructor(api, spec) {
    this.api = api
    this.spec = spec
    this.body = h("tbody")
    this.status = h("p", { class: "status-line", attrs: { role: "status" } })
    this.editor = h("section", { class: "editor", attrs: { hidden: "" } })
    const titleId = `title-${spec.route.replaceAll("/", "-")}`
    this.element = h(
      "section",
      { class: "view", attrs: { "aria-labelledby": titleId } },
      h(
        "header",
        {},
        h("h2", { attrs: { id: titleId } }, spec.title),
        h("button", { attrs: { type: "button" }, on: { click: () => void this.edit(undefined) } }, `New ${spec.noun}`)
      ),
      this.status,
      h(
        "table",
        { attrs: { "aria-label": spec.title } },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ["Name", "Id", ...spec.columns, "Updated", "Actions"].map((t) => h("th", { attrs: { scope: "col" } }, t))
          )
        ),
        this.body
      ),
      this.editor
    )
  }

  async show() {
    try {
      const page = /** @type {{ data: Array<Item> }} */ (await this.api.get(this.spec.route, { limit: 100 }))
      replace(
        this.body,
        page.data.length === 0
          ? h(
            "tr",
            {},
            h(
              "td",
              { class: "empty", attrs: { colspan: String(this.spec.columns.length + 4) } },
              `No ${this.spec.noun}s yet.`
            )
          )
          : page.data.map((item) => this.row(item))
      )
    } catch (error) {
      this.status.textContent = statusOf(error)
    }
  }

  /** @param {Item} item */
  row(item) {
    const name = item.name ?? item.id
    /** @param {string} label @param {() => void} run @param {string} [kind] */
    const button = (label, run, kind) =>
      h("button", {
        ...(kind === undefined ? {} : { class: kind }),
        attrs: { type: "button", "aria-label": `${label} ${name}` },
        on: { click: run }
      }, label)
    return h(
      "tr",
      { attrs: { "data-id": item.id } },
      h("th", { attrs: { scope: "row" } }, name),
      h("td", {}, h("code", {}, item.id)),
      this.spec.columns.map((column) => h("td", {}, cell(item[column]))),
      h("td", {}, time(typeof item["updatedAt"] === "string" ? item["updatedAt"] : undefined)),
      h(
        "td",
        { class: "actions" },
        button("Edit", () => void this.edit(item)),
        this.spec.actions.map((action) => button(action.label, () => void this.act(item, action))),
        button("Delete", () => void this.remove(item), "danger")
      )
    )
  }

  /** @param {Item} item @param {Action} action */
  async act(item, action) {
    /** @type {Record<string, string> | undefined} */
    let body
    if (action.secret !== undefined) {
      const input = h("input", { attrs: { type: "password", autocomplete: "off" } })
      if (
        !(await confirmDialog(
          `${action.label} for ${item.name ?? item.id}`,
          action.label,
          field(action.secret.label, input)
        ))
      ) return
      body = { [action.secret.field]: input.value }
    }
    this.status.textContent = `${action.label}…`
    try {
      const answer = await this.api.request("POST", `${this.spec.route}/${item.id}${action.path}`, body)
      const shown = isRecord(answer) && action.secret === undefined ? summary(answer) : "done."
      this.status.textContent = `${action.label} ${item.name ?? item.id}: ${shown}`
    } catch (error) {
      this.status.textContent = `${action.label} ${item.name ?? item.id}: ${statusOf(error)}`
    }
  }

  /** @param {Item} item */
  async remove(item) {
    if (!(await confirmDialog(`Delete ${this.spec.noun} ${item.name ?? item.id}?`, "Delete"))) return
    try {
      await this.api.request("DELETE", `${this.spec.route}/${item.id}`)
      this.status.textContent = `Deleted ${item.name ?? item.id}.`
      await this.show()
    } catch (error) {
      this.status.textContent = statusOf(error)
    }
  }

  /** @param {Item | undefined} item */
  async edit(item) {
    const secrets = await this.api.get("/v1/secrets", { limit: 100 }).then(
      (page) =>
        /** @type {{ data: Array<Item> }} */ (page).data.map((
          s
        ) => /** @type {const} */ ([s.id, `${s.name ?? s.id} (${s.id})`])),
      () => []
    )
    const form = new Form(this.spec.groups({ secrets }))
    form.write(item ?? { auth: { type: "none" } })
    const title = item === undefined ? `New ${this.spec.noun}` : `Edit ${item.name ?? item.id}`
    const element = h(
      "form",
      { attrs: { novalidate: "" } },
      h("h3", {}, title),
      form.element,
      h(
        "div",
        { class: "actions" },
        h("button", { attrs: { type: "submit" } }, item === undefined ? "Create" : "Save changes"),
        h("button", { attrs: { type: "button" }, on: { click: () => void (this.editor.hidden = true) } }, "Cancel")
      )
    )
    element.addEventListener("submit", (event) => {
      event.preventDefault()
      void this.save(form, item)
    })
    replace(this.editor, element)
    this.editor.setAttribute("aria-label", title)
    this.editor.hidden = false
    const first = /** @type {HTMLElement | null} */ (element.querySelector("input, textarea, select"))
    first?.focus()
  }

  /** @param {Form} form @param {Item | undefined} item */
  async save(form, item) {
    try {
      const read = form.read(item === undefined ? "create" : "update")
      const body = this.spec.normalize?.(read) ?? read
      if (item !== undefined) {
        // Metadata patches per key: a key no longer in the form is removed.
        const given = isRecord(body["metadata"]) ? body["metadata"] : {}
        body["metadata"] = { ...Object.fromEntries(Object.keys(item.metadata ?? {}).map((k) => [k, null])), ...given }
      }
      await this.api.request(
        item === undefined ? "POST" : "PATCH",
        item === undefined ? this.spec.route : `${this.spec.route}/${item.id}`,
        body
      )
      this.editor.hidden = true
      this.status.textContent = `${item === undefined ? "Created" : "Saved"} ${
        String(body["name"] ?? item?.name ?? "")
      }.`
      await this.show()
    } catch (error) {
      form.showFailure(error)
    }
  }
}
