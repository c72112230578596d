// DOCX and PPTX: created from Markdown (the `docx` library; a presentation through LibreOffice
// from a flat ODF file), read as Markdown (mammoth, turndown), edited by exact text and filled
// at {{placeholders}} in their XML.
import {
  AlignmentType,
  Document,
  HeadingLevel,
  ImageRun,
  LevelFormat,
  Packer,
  Paragraph,
  Table,
  TableCell,
  TableRow,
  TextRun,
  WidthType
} from "docx"
import mammoth from "mammoth"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import TurndownService from "turndown"
import { parse, plain, table } from "./markdown.mjs"
import { convert } from "./office.mjs"
import { DocumentError, escapeXml, openZip, paragraphs, readBytes, replaceInParagraphs, slideNames } from "./zip.mjs"

const headings = [
  HeadingLevel.HEADING_1,
  HeadingLevel.HEADING_2,
  HeadingLevel.HEADING_3,
  HeadingLevel.HEADING_4,
  HeadingLevel.HEADING_5,
  HeadingLevel.HEADING_6
]

/** @param {import("./markdown.mjs").Span[]} spans */
const runs = (spans) =>
  spans.map((s) =>
    new TextRun({ text: s.text, bold: s.bold, italics: s.italic, font: s.code ? "Courier New" : undefined })
  )

/** A PNG's or JPEG's size in pixels, scaled to fit 600 px wide. @param {Buffer} bytes */
const imageOf = (bytes) => {
  let width = 480
  let height = 360
  let type = /** @type {"png" | "jpg" | "gif"} */ ("png")
  if (bytes.subarray(1, 4).toString() === "PNG") {
    width = bytes.readUInt32BE(16)
    height = bytes.readUInt32BE(20)
  } else if (bytes[0] === 0xff && bytes[1] === 0xd8) {
    type = "jpg"
    for (let i = 2; i + 9 < bytes.length;) {
      const marker = bytes[i + 1]
      if (marker >= 0xc0 && marker <= 0xc3) {
        height = bytes.readUInt16BE(i + 5)
        width = bytes.readUInt16BE(i + 7)
        break
      }
      i += 2 + bytes.readUInt16BE(i + 2)
    }
  } else if (bytes.subarray(0, 3).toString() === "GIF") {
    type = "gif"
    width = bytes.readUInt16LE(6)
    height = bytes.readUInt16LE(8)
  } else throw new DocumentError("images must be PNG, JPEG or GIF")
  const scale = width > 600 ? 600 / width : 1
  return { type, width: Math.round(width * scale), height: Math.round(height * scale) }
}

/** @param {string} markdown @param {string} output */
export const createDocx = async (markdown, output) => {
  /** @type {Array<Paragraph | Table>} */
  const children = []
  for (const block of parse(markdown)) {
    if (block.type === "heading") {
      children.push(new Paragraph({ heading: headings[block.level - 1], children: runs(block.spans) }))
    } else if (block.type === "paragraph") children.push(new Paragraph({ children: runs(block.spans) }))
    else if (block.type === "break") children.push(new Paragraph({ pageBreakBefore: true }))
    else if (block.type === "list") {
      for (const item of block.items) {
        children.push(
          new Paragraph({
            children: runs(item),
            ...(block.ordered ? { numbering: { reference: "numbered", level: 0 } } : { bullet: { level: 0 } })
          })
        )
      }
    } else if (block.type === "table") {
      const width = Math.max(...block.rows.map((r) => r.length))
      children.push(
        new Table({
          width: { size: 100, type: WidthType.PERCENTAGE },
          rows: block.rows.map((row, r) =>
            new TableRow({
              ...(r === 0 ? { tableHeader: true } : {}),
              children: Array.from({ length: width }, (_, i) =>
                new TableCell({
                  children: [new Paragraph({ children: [new TextRun({ text: row[i] ?? "", bold: r === 0 })] })]
                }))
            })
          )
        })
      )
    } else {
      const data = readBytes(block.path)
      const { type, width, height } = imageOf(data)
      children.push(
        new Paragraph({
          children: [
            new ImageRun({
              type,
              data,
              transformation: { width, height },
              altText: { name: block.alt, description: block.alt, title: block.alt }
            })
          ]
        })
      )
    }
  }
  const doc = new Document({
    numbering: {
      config: [{
        reference: "numbered",
        levels: [{ level: 0, format: LevelFormat.DECIMAL, text: "%1.", alignment: AlignmentType.START }]
      }]
    },
    sections: [{ children }]
  })
  mkdirSync(dirname(output), { recursive: true })
  writeFileSync(output, await Packer.toBuffer(doc))
}

const turndown = new TurndownService({ headingStyle: "atx", bulletListMarker: "-", codeBlockStyle: "fenced" })
/** @param {any} node */
const rowsOf = (node) => {
  /** @type {string[][]} */
  const rows = []
  /** @param {any} n */
  const walk = (n) => {
    for (const child of Array.from(/** @type {ArrayLike<any>} */ (n.childNodes))) {
      if (child.nodeName === "TR") {
        rows.push(
          Array.from(/** @type {ArrayLike<any>} */ (child.childNodes))
            .filter((c) => c.nodeName === "TD" || c.nodeName === "TH")
            .map((c) => turndown.turndown(c.innerHTML).replace(/\n+/g, " "))
        )
      } else if (child.nodeType === 1) walk(child)
    }
  }
  walk(node)
  return rows
}
turndown.addRule("table", { filter: "table", replacement: (_content, node) => `\n\n${table(rowsOf(node))}\n\n` })
turndown.addRule("image", {
  filter: "img",
  replacement: (_content, node) => `![${/** @type {any} */ (node).getAttribute("alt") ?? ""}](embedded image)`
})

/** @param {string} path */
export const readDocx = async (path) => {
  const bytes = readBytes(path)
  await openZip(bytes, path)
  const { value } = await mammoth.convertToHtml({ buffer: bytes })
  return turndown.turndown(value)
}

/** @param {string} path @param {{ first?: number, last?: number }} pages */
export const readPptx = async (path, { first, last }) => {
  const zip = await openZip(readBytes(path), path)
  const slides = slideNames(zip)
  const out = []
  for (const [i, name] of slides.entries()) {
    const n = i + 1
    if ((first !== undefined && n < first) || (last !== undefined && n > last)) continue
    const lines = paragraphs(await zip.file(name)?.async("string") ?? "", "a").filter((l) => l.trim() !== "")
    out.push(`## Slide ${n}\n\n${lines.join("\n\n")}`)
  }
  return { text: out.join("\n\n"), slides: slides.length }
}

/** The parts of a document whose text is edited or filled. @param {import("jszip")} zip @param {"docx" | "pptx"} kind */
const textParts = (zip, kind) =>
  kind === "pptx"
    ? slideNames(zip)
    : Object.keys(zip.files).filter((n) => /^word\/(document|header\d*|footer\d*|footnotes|endnotes)\.xml$/.test(n))

/**
 * Each `{ find, replace }` in the document's text; an edit that finds nothing fails the call.
 * @param {string} path @param {"docx" | "pptx"} kind @param {Array<{ find: string, replace: string }>} edits @param {string} output
 */
export const replaceText = async (path, kind, edits, output) => {
  const zip = await openZip(readBytes(path), path)
  const parts = textParts(zip, kind)
  const ns = kind === "pptx" ? "a" : "w"
  const counts = []
  for (const { find, replace } of edits) {
    let count = 0
    for (const part of parts) {
      const xml = await zip.file(part)?.async("string") ?? ""
      const replaced = replaceInParagraphs(xml, ns, find, replace)
      if (replaced.count > 0) zip.file(part, replaced.xml)
      count += replaced.count
    }
    if (count === 0) throw new DocumentError(`text not found in ${path}: ${JSON.stringify(find)}`)
    counts.push({ find, replacements: count })
  }
  mkdirSync(dirname(output), { recursive: true })
  writeFileSync(output, await zip.generateAsync({ type: "nodebuffer", compression: "DEFLATE" }))
  return counts
}

/** The {{placeholders}} of a DOCX template. @param {string} path */
export const placeholders = async (path) => {
  const zip = await openZip(readBytes(path), path)
  const names = new Set()
  for (const part of textParts(zip, "docx")) {
    for (const p of paragraphs(await zip.file(part)?.async("string") ?? "", "w")) {
      for (const m of p.matchAll(/\{\{\s*([^{}\s]+)\s*\}\}/g)) names.add(m[1])
    }
  }
  return [...names]
}

/** Slides from Markdown: each `---`, or each heading of level 1 or 2 after the first block, starts one. @param {string} markdown @param {string} output */
export const createPptx = (markdown, output) => {
  /** @type {Array<{ title: string, lines: string[] }>} */
  const slides = []
  let current = /** @type {{ title: string, lines: string[] } | undefined} */ (undefined)
  const slide = () => (current ??= (slides.push({ title: "", lines: [] }), slides[slides.length - 1]))
  for (const block of parse(markdown)) {
    if (block.type === "break") current = undefined
    else if (block.type === "heading" && block.level <= 2) {
      if (current !== undefined && (current.title !== "" || current.lines.length > 0)) current = undefined
      slide().title = plain(block.spans)
    } else if (block.type === "heading" || block.type === "paragraph") slide().lines.push(plain(block.spans))
    else if (block.type === "list") {
      slide().lines.push(...block.items.map((item, i) => `${block.ordered ? `${i + 1}.` : "•"} ${plain(item)}`))
    } else if (block.type === "table") slide().lines.push(...block.rows.map((row) => row.join("  |  ")))
    else slide().lines.push(`[image: ${block.alt || block.path}]`)
  }
  const pages = slides.map((s, i) =>
    `<draw:page draw:name="Slide ${i + 1}" draw:master-page-name="Default">` +
    `<draw:frame svg:x="1.5cm" svg:y="1cm" svg:width="25cm" svg:height="2.5cm"><draw:text-box><text:p text:style-name="T">${
      escapeXml(s.title)
    }</text:p></draw:text-box></draw:frame>` +
    `<draw:frame svg:x="1.5cm" svg:y="4cm" svg:width="25cm" svg:height="10.5cm"><draw:text-box>${
      s.lines.map((l) => `<text:p text:style-name="B">${escapeXml(l)}</text:p>`).join("")
    }</draw:text-box></draw:frame></draw:page>`
  )
  const fodp = `<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.presentation">
<office:automatic-styles><style:page-layout style:name="PM"><style:page-layout-properties fo:margin-top="0cm" fo:margin-bottom="0cm" fo:margin-left="0cm" fo:margin-right="0cm" fo:page-width="28cm" fo:page-height="15.75cm" style:print-orientation="landscape"/></style:page-layout>
<style:style style:name="T" style:family="paragraph"><style:text-properties fo:font-size="32pt" fo:font-weight="bold"/></style:style>
<style:style style:name="B" style:family="paragraph"><style:paragraph-properties fo:margin-bottom="0.3cm"/><style:text-properties fo:font-size="18pt"/></style:style></office:automatic-styles>
<office:master-styles><style:master-page style:name="Default" style:page-layout-name="PM"/></office:master-styles>
<office:body><office:presentation>${pages.join("\n")}</office:presentation></office:body></office:document>`
  mkdirSync("/workspace/.svc/tmp", { recursive: true })
  const dir = mkdtempSync("/workspace/.svc/tmp/slides-")
  try {
    const source = join(dir, "slides.fodp")
    writeFileSync(source, fodp)
    convert(source, "pptx", output)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  return slides.length
}
