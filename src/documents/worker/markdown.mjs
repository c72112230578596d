// The Markdown the document tools accept, as blocks: headings, paragraphs, bullet and numbered
// lists, pipe tables, images (`![alt](path)`) and slide breaks (`---`). Inline: **bold**, *italic*,
// `code`. Plain JavaScript: it runs inside the sandbox on the host's Node (see DocumentRuntime.ts).

/** @typedef {{ text: string, bold?: boolean, italic?: boolean, code?: boolean }} Span */
/**
 * @typedef {{ type: "heading", level: number, spans: Span[] }
 *   | { type: "paragraph", spans: Span[] }
 *   | { type: "list", ordered: boolean, items: Span[][] }
 *   | { type: "table", rows: string[][] }
 *   | { type: "image", alt: string, path: string }
 *   | { type: "break" }} Block
 */

/** @param {string} text @returns {Span[]} */
export const inline = (text) => {
  /** @type {Span[]} */
  const spans = []
  const pattern = /(\*\*[^*]+\*\*|__[^_]+__|\*[^*]+\*|_[^_]+_|`[^`]+`)/g
  let last = 0
  for (const match of text.matchAll(pattern)) {
    const index = match.index ?? 0
    if (index > last) spans.push({ text: text.slice(last, index) })
    const token = match[0]
    if (token.startsWith("**") || token.startsWith("__")) spans.push({ text: token.slice(2, -2), bold: true })
    else if (token.startsWith("`")) spans.push({ text: token.slice(1, -1), code: true })
    else spans.push({ text: token.slice(1, -1), italic: true })
    last = index + token.length
  }
  if (last < text.length) spans.push({ text: text.slice(last) })
  return spans
}

/** @param {string} line */
const cells = (line) => line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim())

const isDivider = (/** @type {string} */ line) => /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/.test(line)

/** @param {string} markdown @returns {Block[]} */
export const parse = (markdown) => {
  /** @type {Block[]} */
  const blocks = []
  const lines = markdown.replace(/\r\n?/g, "\n").split("\n")
  /** @type {string[]} */
  let paragraph = []
  const flush = () => {
    if (paragraph.length > 0) blocks.push({ type: "paragraph", spans: inline(paragraph.join(" ")) })
    paragraph = []
  }
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    const heading = /^(#{1,6})\s+(.*)$/.exec(line)
    const image = /^\s*!\[([^\]]*)\]\(([^)\s]+)\)\s*$/.exec(line)
    const bullet = /^\s*[-*+]\s+(.*)$/.exec(line)
    const numbered = /^\s*\d+[.)]\s+(.*)$/.exec(line)
    if (line.trim() === "") flush()
    else if (/^\s*(---+|\*\*\*+)\s*$/.test(line)) {
      flush()
      blocks.push({ type: "break" })
    } else if (heading !== null) {
      flush()
      blocks.push({ type: "heading", level: heading[1].length, spans: inline(heading[2].trim()) })
    } else if (image !== null) {
      flush()
      blocks.push({ type: "image", alt: image[1], path: image[2] })
    } else if (line.includes("|") && i + 1 < lines.length && isDivider(lines[i + 1])) {
      flush()
      const rows = [cells(line)]
      i += 2
      while (i < lines.length && lines[i].includes("|") && lines[i].trim() !== "") rows.push(cells(lines[i++]))
      i--
      blocks.push({ type: "table", rows })
    } else if (bullet !== null || numbered !== null) {
      flush()
      const ordered = numbered !== null
      const items = []
      const itemOf = ordered ? /^\s*\d+[.)]\s+(.*)$/ : /^\s*[-*+]\s+(.*)$/
      while (i < lines.length) {
        const item = itemOf.exec(lines[i])
        if (item === null) break
        items.push(inline(item[1]))
        i++
      }
      i--
      blocks.push({ type: "list", ordered, items })
    } else paragraph.push(line.trim())
  }
  flush()
  return blocks
}

/** The plain text of spans. @param {Span[]} spans */
export const plain = (spans) => spans.map((s) => s.text).join("")

/** A Markdown pipe table of rows (the first row is the header). @param {string[][]} rows */
export const table = (rows) => {
  if (rows.length === 0) return ""
  const width = Math.max(...rows.map((r) => r.length))
  const line = (/** @type {string[]} */ r) =>
    `| ${Array.from({ length: width }, (_, i) => (r[i] ?? "").replace(/\|/g, "\\|").replace(/\n/g, " ")).join(" | ")} |`
  return [line(rows[0]), `|${" --- |".repeat(width)}`, ...rows.slice(1).map(line)].join("\n")
}
