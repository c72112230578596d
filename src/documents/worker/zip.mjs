// Office files are zip archives: opened only after their central directory says what they
// would inflate to, so a zip bomb is refused before a byte of it is inflated.
import JSZip from "jszip"
import { readFileSync } from "node:fs"

/** What an archive may inflate to in all, and how many entries it may have. */
export const maxInflatedBytes = 256 * 1024 * 1024
export const maxEntries = 10_000

export class DocumentError extends Error {}

/** @param {string} path */
export const readBytes = (path) => {
  try {
    return readFileSync(path)
  } catch (e) {
    throw new DocumentError(`cannot read ${path}: ${e instanceof Error ? e.message : String(e)}`)
  }
}

/** @param {Uint8Array} bytes @param {string} what */
export const openZip = async (bytes, what) => {
  /** @type {JSZip} */
  let zip
  try {
    zip = await JSZip.loadAsync(bytes, { checkCRC32: true })
  } catch (e) {
    throw new DocumentError(
      `${what} is not a valid Office file (not a zip archive: ${e instanceof Error ? e.message : e})`
    )
  }
  const entries = Object.values(zip.files)
  if (entries.length > maxEntries) {
    throw new DocumentError(`${what} has ${entries.length} entries (at most ${maxEntries})`)
  }
  let total = 0
  for (const entry of entries) {
    // JSZip keeps the central directory's sizes on each entry before inflating anything.
    const data = /** @type {{ _data?: { uncompressedSize?: number } }} */ (/** @type {unknown} */ (entry))._data
    total += data?.uncompressedSize ?? 0
  }
  if (total > maxInflatedBytes) {
    throw new DocumentError(
      `${what} would inflate to ${total} bytes, over the limit of ${maxInflatedBytes} bytes (a zip bomb?)`
    )
  }
  return zip
}

/** @param {JSZip} zip @param {string} name */
export const text = async (zip, name) => {
  const file = zip.file(name)
  return file === null ? undefined : await file.async("string")
}

/** The slides of a presentation in order (ppt/slides/slideN.xml). @param {JSZip} zip */
export const slideNames = (zip) =>
  Object.keys(zip.files)
    .filter((name) => /^ppt\/slides\/slide\d+\.xml$/.test(name))
    .sort((a, b) => Number(/\d+/.exec(a.slice(10))?.[0]) - Number(/\d+/.exec(b.slice(10))?.[0]))

const entities = /** @type {Record<string, string>} */ ({ amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'" })
/** @param {string} s */
export const unescapeXml = (s) =>
  s.replace(/&(amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);/g, (_, e) =>
    e.startsWith("#x")
      ? String.fromCodePoint(parseInt(e.slice(2), 16))
      : e.startsWith("#")
      ? String.fromCodePoint(parseInt(e.slice(1), 10))
      : entities[e] ?? "")
/** @param {string} s */
export const escapeXml = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

/**
 * Replaces `find` by `replace` in the paragraphs of a WordprocessingML or DrawingML part (`w` or
 * `a` runs). Text split across runs is joined into the paragraph's first run when it has to be.
 * @param {string} xml @param {"w" | "a"} ns @param {string} find @param {string} replace
 * @returns {{ xml: string, count: number }}
 */
export const replaceInParagraphs = (xml, ns, find, replace) => {
  let count = 0
  const paragraph = new RegExp(`<${ns}:p[ >][\\s\\S]*?</${ns}:p>`, "g")
  const run = new RegExp(`(<${ns}:t(?: [^>]*)?>)([^<]*)(</${ns}:t>)`, "g")
  const out = xml.replace(paragraph, (p) => {
    const texts = [...p.matchAll(run)].map((m) => unescapeXml(m[2]))
    const joined = texts.join("")
    if (find === "" || !joined.includes(find)) return p
    count += joined.split(find).length - 1
    // Within one run: each run's own text is replaced, the rest of its formatting kept.
    if (
      texts.filter((t) => t.includes(find)).reduce((n, t) => n + t.split(find).length - 1, 0) ===
        joined.split(find).length - 1
    ) {
      return p.replace(
        run,
        (_, open, t, close) => `${open}${escapeXml(unescapeXml(t).split(find).join(replace))}${close}`
      )
    }
    let first = true
    return p.replace(run, (_, open, _t, close) => {
      const value = first ? joined.split(find).join(replace) : ""
      first = false
      return `${ns === "w" ? open.replace(/^<w:t(?: [^>]*)?>/, "<w:t xml:space=\"preserve\">") : open}${
        escapeXml(value)
      }${close}`
    })
  })
  return { xml: out, count }
}

/** The text of each paragraph of a part. @param {string} xml @param {"w" | "a"} ns */
export const paragraphs = (xml, ns) => {
  const paragraph = new RegExp(`<${ns}:p[ >][\\s\\S]*?</${ns}:p>`, "g")
  const run = new RegExp(`<${ns}:t(?: [^>]*)?>([^<]*)</${ns}:t>`, "g")
  return [...xml.matchAll(paragraph)].map((p) => [...p[0].matchAll(run)].map((m) => unescapeXml(m[1])).join(""))
}
