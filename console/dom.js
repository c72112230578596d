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
