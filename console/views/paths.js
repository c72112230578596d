/** Values at dotted paths ("workspace.seed.url") of plain JSON objects: how a form's fields map to a body. */

/**
 * @param {unknown} value
 * @returns {value is Record<string, unknown>}
 */
export const isRecord = (value) => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * @param {unknown} value
 * @param {string} path
 * @returns {unknown}
 */
export const getPath = (value, path) =>
  path.split(".").reduce((/** @type {unknown} */ at, key) => (isRecord(at) ? at[key] : undefined), value)

/**
 * Sets `path` in `target`, making the objects on the way (a `true` on the way becomes an object:
 * `browser: true` then `browser.tabs` gives `browser: { tabs }`).
 * @param {Record<string, unknown>} target
 * @param {string} path
 * @param {unknown} value
 */
export const setPath = (target, path, value) => {
  const keys = path.split(".")
  let at = target
  for (const key of keys.slice(0, -1)) {
    const next = at[key]
    if (isRecord(next)) at = next
    else {
      /** @type {Record<string, unknown>} */
      const made = {}
      at[key] = made
      at = made
    }
  }
  at[keys[keys.length - 1]] = value
}
