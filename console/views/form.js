/**
 * The forms of the resource views, built from a list of fields: each field
 * names where its value goes in the request body ("capabilities.browser.tabs"),
 * reads it from its control (an empty control sends nothing) and fills the
 * control from a stored resource. A refusal's envelope (`details.field`,
 * `details.errors[].field`) is shown next to the field it names, else at the
 * top of the form. Every control has a label; an invalid one is marked
 * `aria-invalid` and described by its message.
 */
import { h, replace } from "../dom.js"
import { blocksControl } from "./blocks.js"
import { getPath, isRecord, setPath } from "./paths.js"

/**
 * @typedef {"text" | "secret" | "textarea" | "number" | "check" | "tri" | "select" | "list" | "numbers" | "json" | "ids" | "pairs" | "blocks"} Kind
 * @typedef {object} Field
 * @property {string} path where the value goes in the body
 * @property {string} label
 * @property {Kind} kind
 * @property {ReadonlyArray<readonly [string, string]>} [options] value and label (select, ids)
 * @property {string} [help]
 * @property {boolean} [required]
 * @property {boolean} [createOnly] sent only when creating (a write-only value, a registration choice)
 * @property {boolean} [nullOnUpdate] an empty control clears the stored value on update (sends null)
 * @property {ReadonlyArray<string>} [exclude] pairs: keys another field edits
 * @typedef {object} Group
 * @property {string} legend
 * @property {ReadonlyArray<Field>} fields
 * @property {{ path: string, values: ReadonlyArray<string> }} [when] shown (and read) only when that select has one of these values
 * @typedef {{ element: HTMLElement, read: () => unknown, write: (value: unknown) => void }} Control
 */

let counter = 0

/** @param {Field} field @returns {Control} */
const controlOf = (field) => {
  const attrs = field.required === true ? { required: "" } : {}
  switch (field.kind) {
    case "text":
    case "secret":
    case "number": {
      const type = field.kind === "secret" ? "password" : field.kind
      const input = h("input", { attrs: { type, autocomplete: "off", ...attrs } })
      return {
        element: input,
        read: () => (input.value.trim() === "" ? undefined : type === "number" ? Number(input.value) : input.value),
        write: (value) => void (input.value = value === undefined || value === null ? "" : String(value))
      }
    }
    case "textarea":
    case "list":
    case "numbers":
    case "json":
    case "pairs": {
      const area = h("textarea", { attrs: { rows: field.kind === "json" ? "4" : "2", ...attrs } })
      const exclude = field.exclude ?? []
      return {
        element: area,
        read: () => {
          const text = area.value.trim()
          if (text === "") return undefined
          const lines = text.split("\n").map((l) => l.trim()).filter((l) => l !== "")
          if (field.kind === "list") return lines
          if (field.kind === "numbers") return lines.map(Number)
          if (field.kind === "pairs") {
            return Object.fromEntries(lines.map((l) => [l.split("=")[0].trim(), l.slice(l.indexOf("=") + 1).trim()]))
          }
          if (field.kind === "json") return JSON.parse(text)
          return area.value
        },
        write: (value) => {
          area.value = value === undefined || value === null
            ? ""
            : field.kind === "list" || field.kind === "numbers"
            ? (Array.isArray(value) ? value.join("\n") : String(value))
            : field.kind === "json"
            ? JSON.stringify(value, null, 2)
            : field.kind === "pairs" && isRecord(value)
            ? Object.entries(value).filter(([k]) => !exclude.includes(k)).map(([k, v]) => `${k}=${String(v)}`).join(
              "\n"
            )
            : String(value)
        }
      }
    }
    case "check": {
      const box = h("input", { attrs: { type: "checkbox" } })
      return {
        element: box,
        read: () => (box.checked ? true : undefined),
        write: (value) => void (box.checked = value !== undefined && value !== null && value !== false)
      }
    }
    case "tri":
    case "select": {
      const options = field.kind === "tri"
        ? [["", "Default"], ["true", "On"], ["false", "Off"]]
        : [...(field.required === true ? [] : [["", "(none)"]]), ...(field.options ?? [])]
      const select = h("select", { attrs }, options.map(([value, label]) => h("option", { attrs: { value } }, label)))
      return {
        element: select,
        read: () => select.value === "" ? undefined : field.kind === "tri" ? select.value === "true" : select.value,
        // A required select has no empty choice: nothing stored means its first option.
        write: (value) =>
          void (select.value = value === undefined || value === null ? (options[0]?.[0] ?? "") : String(value))
      }
    }
    case "ids": {
      const boxes = (field.options ?? []).map(([value, label]) =>
        h("label", { class: "choice" }, h("input", { attrs: { type: "checkbox", value } }), ` ${label}`)
      )
      const inputs = () => boxes.map((b) => /** @type {HTMLInputElement} */ (b.firstChild))
      const element = h(
        "div",
        { class: "ids", attrs: { role: "group", "aria-label": field.label } },
        boxes.length === 0 ? h("span", { class: "empty" }, "None registered yet.") : boxes
      )
      return {
        element,
        read: () => {
          const chosen = inputs().filter((i) => i.checked).map((i) => i.value)
          return chosen.length === 0 ? undefined : chosen
        },
        write: (value) => {
          const chosen = Array.isArray(value) ? value.map(String) : []
          for (const input of inputs()) input.checked = chosen.includes(input.value)
        }
      }
    }
    case "blocks":
      return blocksControl(field.label)
  }
}

export class Form {
  /** @param {ReadonlyArray<Group>} groups */
  constructor(groups) {
    this.groups = groups
    /** @type {Array<{ field: Field, control: Control, error: HTMLElement, box: HTMLElement, group: Group }>} */
    this.entries = []
    this.error = h("p", { class: "error", attrs: { role: "alert" } })
    this.element = h(
      "div",
      { class: "form-fields" },
      this.error,
      groups.map((group) => {
        const box = h("fieldset", {}, h("legend", {}, group.legend))
        for (const field of group.fields) box.append(this.fieldElement(field, group, box))
        return box
      })
    )
    for (const entry of this.entries) {
      entry.control.element.addEventListener("change", () => this.applyWhen())
    }
    this.applyWhen()
  }

  /** @param {Field} field @param {Group} group @param {HTMLElement} box */
  fieldElement(field, group, box) {
    const control = controlOf(field)
    const id = `f${++counter}`
    const error = h("p", { class: "field-error", attrs: { id: `${id}-error` } })
    const help = field.help === undefined
      ? null
      : h("small", { class: "help", attrs: { id: `${id}-help` } }, field.help)
    control.element.setAttribute("aria-describedby", `${id}-error${help === null ? "" : ` ${id}-help`}`)
    control.element.dataset["path"] = field.path
    this.entries.push({ field, control, error, box, group })
    if (field.kind === "check") {
      return h(
        "div",
        { class: "field" },
        h("label", { class: "choice" }, control.element, ` ${field.label}`),
        help,
        error
      )
    }
    if (field.kind === "ids" || field.kind === "blocks") {
      return h("div", { class: "field" }, h("span", { class: "label" }, field.label), control.element, help, error)
    }
    // Labelled by `for`, not by wrapping: a wrapped select's name would include its chosen option.
    control.element.id = id
    return h("div", { class: "field" }, h("label", { attrs: { for: id } }, field.label), control.element, help, error)
  }

  /** Shows only the groups whose condition holds. */
  applyWhen() {
    for (const group of this.groups) {
      if (group.when === undefined) continue
      const { path, values } = group.when
      const entry = this.entries.find((e) => e.field.path === path)
      const value = entry === undefined ? undefined : entry.control.read()
      const shown = values.includes(value === undefined ? "" : String(value))
      for (const e of this.entries) if (e.group === group) e.box.hidden = !shown
    }
  }

  /**
   * The body the form describes (only the shown groups' non-empty fields); throws on a field it cannot read.
   * @param {"create" | "update"} mode
   * @returns {Record<string, unknown>}
   */
  read(mode) {
    /** @type {Record<string, unknown>} */
    const body = {}
    for (const { field, control, box } of this.entries) {
      if (box.hidden || (mode === "update" && field.createOnly === true)) continue
      let value
      try {
        value = control.read()
      } catch (error) {
        this.showErrors([{ field: field.path, message: `Not valid JSON: ${String(error)}` }])
        throw new Error(`${field.label}: not valid JSON.`)
      }
      if (value === undefined && mode === "update" && field.nullOnUpdate === true) value = null
      if (value !== undefined && getPath(body, field.path) === undefined) setPath(body, field.path, value)
      else if (value !== undefined && value !== true) setPath(body, field.path, value)
    }
    return body
  }

  /** @param {unknown} resource fills every control from a stored resource */
  write(resource) {
    for (const { field, control } of this.entries) control.write(getPath(resource, field.path))
    this.applyWhen()
    this.clearErrors()
  }

  clearErrors() {
    this.error.textContent = ""
    for (const { control, error } of this.entries) {
      error.textContent = ""
      control.element.removeAttribute("aria-invalid")
    }
  }

  /**
   * Shows each issue next to the field its path names (or the nearest field above it); the rest at the top.
   * @param {ReadonlyArray<{ field: string, message: string }>} issues
   * @param {string} [summary] the envelope's message, shown at the top when no field takes it
   */
  showErrors(issues, summary) {
    this.clearErrors()
    /** @type {Array<string>} */
    const unplaced = []
    for (const issue of issues) {
      let path = issue.field.replace(/\[\d+\]/g, "")
      let entry = this.entries.find((e) => e.field.path === path && !e.box.hidden)
      while (entry === undefined && path.includes(".")) {
        path = path.slice(0, path.lastIndexOf("."))
        entry = this.entries.find((e) => e.field.path === path && !e.box.hidden)
      }
      if (entry === undefined) unplaced.push(issue.field === "" ? issue.message : `${issue.field}: ${issue.message}`)
      else {
        entry.error.textContent = issue.message
        entry.control.element.setAttribute("aria-invalid", "true")
      }
    }
    replace(this.error, unplaced.length > 0 ? unplaced.join(" ") : issues.length === 0 ? (summary ?? "") : "")
    const first = this.entries.find((e) => e.control.element.getAttribute("aria-invalid") === "true")
    first?.control.element.focus()
  }

  /**
   * Shows a refusal: its field issues next to their fields.
   * @param {unknown} failure an ApiError (or anything thrown)
   */
  showFailure(failure) {
    const details = isRecord(failure) && isRecord(failure["details"]) ? failure["details"] : {}
    const message = failure instanceof Error ? failure.message : String(failure)
    const listed = Array.isArray(details["errors"]) ? details["errors"] : []
    /** @type {Array<{ field: string, message: string }>} */
    const issues = listed.flatMap((e) =>
      isRecord(e) && typeof e["field"] === "string" && typeof e["message"] === "string"
        ? [{ field: e["field"], message: e["message"] }]
        : []
    )
    if (issues.length === 0 && typeof details["field"] === "string") issues.push({ field: details["field"], message })
    this.showErrors(issues, message)
  }
}
