/**
 * The console's whole view layer: elements built from text, never from HTML.
 * `h` sets attributes with setAttribute, listeners with addEventListener and
 * children as Text nodes, so whatever a model or a tool wrote is shown exactly
 * as written. (The page's Content-Security-Policy backs this up: with Trusted
 * Types and no policy, innerHTML and its kind refuse strings.)
 */

/** @typedef {string | number | Node | null | undefined | false} Leaf */
/** @typedef {Leaf | ReadonlyArray<Leaf>} Child */

/**
 * @typedef {object} Props
 * @property {string} [class]
 * @property {Record<string, string>} [attrs]
 * @property {{ [K in keyof HTMLElementEventMap]?: (event: HTMLElementEventMap[K]) => void }} [on]
 */

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Props} [props]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export const h = (tag, props = {}, ...children) => {
  const element = document.createElement(tag)
  if (props.class !== undefined) element.className = props.class
  for (const [name, value] of Object.entries(props.attrs ?? {})) element.setAttribute(name, value)
  for (const [event, listener] of Object.entries(props.on ?? {})) {
    element.addEventListener(event, /** @type {EventListener} */ (listener))
  }
  append(element, ...children)
  return element
}

/**
 * Appends children (strings become Text nodes; null, undefined and false are skipped).
 * @param {Element} parent
 * @param {...Child} children
 */
export const append = (parent, ...children) => {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue
    parent.append(typeof child === "number" ? String(child) : child)
  }
}

/**
 * Replaces every child of `parent`.
 * @param {Element} parent
 * @param {...Child} children
 */
export const replace = (parent, ...children) => {
  parent.replaceChildren()
  append(parent, ...children)
}

/**
 * A value as indented JSON in a <pre> (text, never markup).
 * @param {unknown} value
 * @param {string} [label] the element's accessible name
 */
export const json = (value, label) =>
  h(
    "pre",
    { class: "json", ...(label === undefined ? {} : { attrs: { "aria-label": label } }) },
    value === undefined ? "(none)" : JSON.stringify(value, null, 2)
  )

/**
 * An ISO timestamp in the reader's locale, with the exact value as its title.
 * @param {string | null | undefined} iso
 */
export const time = (iso) =>
  iso === null || iso === undefined
    ? h("span", {}, "-")
    : h("time", { attrs: { datetime: iso, title: iso } }, new Date(iso).toLocaleString())

/**
 * A labelled form control: <label>text <control></label>.
 * @param {string} text
 * @param {HTMLElement} control
 */
export const field = (text, control) => h("label", { class: "field" }, h("span", {}, text), control)

/**
 * The message of anything thrown, for the reader.
 * @param {unknown} error
 */
export const messageOf = (error) =>
  error instanceof TypeError
    ? `Could not reach the service (${error.message}).`
    : error instanceof Error
    ? error.message
    : String(error)

/**
 * Asks the reader to confirm (a modal <dialog>: focus moves into it, Escape cancels); answers their choice.
 * @param {string} question
 * @param {string} confirmLabel the button that confirms ("Delete")
 * @param {HTMLElement} [extra] a control shown in the dialog (a new value to rotate to)
 * @returns {Promise<boolean>}
 */
export const confirmDialog = (question, confirmLabel, extra) =>
  new Promise((resolve) => {
    const yes = h("button", { class: "danger", attrs: { type: "submit", value: "yes" } }, confirmLabel)
    const no = h("button", { attrs: { type: "button" } }, "Cancel")
    const form = h(
      "form",
      { attrs: { method: "dialog" } },
      h("p", {}, question),
      extra ?? null,
      h("div", { class: "actions" }, yes, no)
    )
    const dialog = h("dialog", { attrs: { "aria-label": question } }, form)
    no.addEventListener("click", () => dialog.close("no"))
    form.addEventListener("submit", (event) => {
      event.preventDefault()
      dialog.close("yes")
    })
    dialog.addEventListener("close", () => {
      dialog.remove()
      resolve(dialog.returnValue === "yes")
    })
    document.body.append(dialog)
    dialog.showModal()
    ;(extra?.querySelector("input") ?? no).focus()
  })

/**
 * A link inside the console (hash routes: the browser's back button and new tabs work).
 * @param {string} route "#/threads/thread_…"
 * @param {...Child} children
 */
export const link = (route, ...children) => h("a", { attrs: { href: route } }, ...children)

/**
 * The envelope of a refusal as a sentence with its request id, for a status line.
 * @param {unknown} error
 */
export const statusOf = (error) => {
  const id = typeof error === "object" && error !== null && "requestId" in error ? error.requestId : undefined
  return typeof id === "string" ? `${messageOf(error)} (request ${id})` : messageOf(error)
}
