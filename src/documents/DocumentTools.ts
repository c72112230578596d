/**
 * The document tools of `workspace.documents` (spec 2.1.3; the names are
 * public contract): `document_read`, `document_create`, `document_edit`,
 * `document_fill`, `document_export`, `document_preview`. Each call is one
 * request to the document worker inside the thread's sandbox
 * (DocumentRuntime); what they write are ordinary workspace files (spec
 * 2.1.2: no export unless the agent calls `workspace_export_artifact`).
 */
import { Effect, Schema } from "effect"
import { posix } from "node:path"
import * as ToolDef from "../tools/ToolDef.ts"
import { NonEmpty, OneOf, optional, Text } from "../tools/ToolInput.ts"
import * as ToolOutcome from "../tools/ToolOutcome.ts"
import { FileToolError } from "../workspace/WorkspaceFiles.ts"
import * as WorkspacePath from "../workspace/WorkspacePath.ts"
import type { WorkspaceUnavailable } from "../workspace/WorkspaceUnavailable.ts"
import { type ConverterFailed, type Converting, worker } from "./DocumentRuntime.ts"

export interface DocumentCall extends Converting {
  readonly mask: (text: string) => string
}

const Path = NonEmpty("Path of the document, relative to the workspace root.")
const Output = optional(NonEmpty("Where to write the result, relative to the workspace root (default: see the tool)."))
const Cell = Schema.Union([Schema.String, Schema.Number, Schema.Boolean, Schema.Null])
const Sheet = Schema.Struct({
  name: optional(NonEmpty("The sheet's name (default Sheet1, Sheet2, ...).")),
  rows: Schema.Array(Schema.Array(Cell)).annotate({
    description:
      "Rows of cells from A1; a string starting with `=` is a formula (e.g. `=SUM(B2:B9)`), null an empty cell."
  })
})

const tool = <S extends ToolDef.Input, A>(
  config: ToolDef.Config<S> & {
    readonly handler: (
      input: S["Type"],
      ctx: DocumentCall
    ) => Effect.Effect<A | ToolOutcome.ToolOutcome, FileToolError | WorkspaceUnavailable | ConverterFailed>
  }
) => ToolDef.make(config)

/** A path of the call, checked (relative, inside the workspace), as the worker sees it. */
const inner = (path: string, field = "path") => {
  const p = WorkspacePath.resolve(path)
  if ("error" in p) return Effect.fail(FileToolError.of(`${field}: ${p.error}`))
  if (p.relative === ".") return Effect.fail(FileToolError.of(`${field}: give a file path, not the workspace root`))
  return Effect.succeed(p)
}

const extension = (path: string) => posix.extname(path).slice(1).toLowerCase()
const relative = (innerPath: string) => innerPath.replace(/^\/workspace\//, "")

/** `"3"` or `"2-5"` -> first and last page; undefined when absent. */
const pageRange = (pages: string | undefined) => {
  if (pages === undefined) return Effect.succeed({})
  const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(pages)
  const first = Number(m?.[1])
  const last = m?.[2] === undefined ? first : Number(m[2])
  return m === null || first < 1 || last < first
    ? Effect.fail(FileToolError.of(`pages: '${pages}' is not a page or a range like 2-5`))
    : Effect.succeed({ first, last })
}

const done = (ctx: DocumentCall, output: Readonly<Record<string, unknown>>, text: string) =>
  ToolOutcome.success(output, ctx.mask(text))

export const documentRead = tool({
  name: "document_read",
  description:
    "Read a DOCX, XLSX, CSV, PPTX or PDF file of the workspace as Markdown: tables as Markdown tables, spreadsheet cells under their column letters and row numbers (a formula shows its value and `(=formula)`), `## Page N` and `## Slide N` headings kept.",
  input: Schema.Struct({
    path: Path,
    pages: optional(Text("PDF pages or PPTX slides to read: `3` or `2-5` (default all).")),
    sheet: optional(NonEmpty("The one sheet of a spreadsheet to read (default every sheet)."))
  }),
  handler: (input, ctx) =>
    Effect.gen(function*() {
      const p = yield* inner(input.path)
      const range = yield* pageRange(input.pages)
      const answer = yield* worker(ctx, { op: "read", path: p.inner, ...range, sheet: input.sheet })
      const text = typeof answer["text"] === "string" ? ctx.mask(answer["text"]) : ""
      const cut = answer["truncated"] === true ? "\n(cut at 1,000,000 characters; read fewer pages or one sheet)" : ""
      return ToolOutcome.success({ ...answer, path: p.relative, text }, text + cut)
    })
})

export const documentCreate = tool({
  name: "document_create",
  description:
    "Create a document in the workspace. docx, pdf, pptx: from Markdown `content` (headings, paragraphs, **bold**/*italic*, bullet and numbered lists, pipe tables, images `![alt](workspace/path.png)`; in pptx each `---` or level 1-2 heading starts a slide). xlsx: from `sheets` (rows of cells, `=` formulas, computed by LibreOffice) or the Markdown tables of `content`, one sheet each.",
  input: Schema.Struct({
    path: Path,
    format: OneOf(["docx", "xlsx", "pptx", "pdf"], "The document's format; the path must have it as its extension."),
    content: optional(Text("Markdown.")),
    sheets: optional(Schema.Array(Sheet).annotate({ description: "xlsx only: the sheets, in order." }))
  }),
  handler: (input, ctx) =>
    Effect.gen(function*() {
      const p = yield* inner(input.path)
      if (extension(p.relative) !== input.format) {
        return yield* FileToolError.of(`path: a ${input.format} document's path ends in .${input.format}`)
      }
      if (input.sheets !== undefined && input.format !== "xlsx") {
        return yield* FileToolError.of("sheets: only an xlsx document has sheets; give Markdown content")
      }
      if (input.content === undefined && input.sheets === undefined) {
        return yield* FileToolError.of(
          `content: give the document's Markdown${input.format === "xlsx" ? " or sheets" : ""}`
        )
      }
      const answer = yield* worker(ctx, {
        op: "create",
        path: p.inner,
        format: input.format,
        content: input.content,
        sheets: input.sheets
      })
      return done(ctx, { path: p.relative, format: input.format, ...answer }, `Created ${p.relative}.`)
    })
})

const Replacement = Schema.Struct({
  find: NonEmpty("Exact text to replace (DOCX, PPTX); every occurrence is replaced."),
  replace: Text("Replacement text.")
})
const CellWrite = Schema.Struct({
  cell: NonEmpty("Cell address, e.g. B7 (XLSX)."),
  value: Cell,
  sheet: optional(NonEmpty("Sheet name (default the first)."))
})

export const documentEdit = tool({
  name: "document_edit",
  description:
    "Edit a document: exact-text replacements `{ find, replace }` in a DOCX or PPTX (an edit whose text is absent fails the call), cell writes `{ cell, value, sheet? }` in an XLSX (a string starting with `=` is a formula; formulas are recomputed). Writes `output`, or the document itself.",
  input: Schema.Struct({
    path: Path,
    edits: Schema.Array(Schema.Union([Replacement, CellWrite])).annotate({
      description: "The edits, applied in order."
    }),
    output: Output
  }),
  handler: (input, ctx) =>
    Effect.gen(function*() {
      const p = yield* inner(input.path)
      const out = yield* inner(input.output ?? input.path, "output")
      if (input.edits.length === 0) return yield* FileToolError.of("edits: give at least one edit")
      const sheet = extension(p.relative) === "xlsx"
      const cells = input.edits.flatMap((e) => ("cell" in e ? [e] : []))
      const replacements = input.edits.flatMap((e) => ("find" in e ? [e] : []))
      if (sheet ? replacements.length > 0 : cells.length > 0) {
        return yield* FileToolError.of(
          sheet
            ? "edits: an XLSX is edited by cell ({ cell, value })"
            : "edits: a DOCX or PPTX is edited by text ({ find, replace })"
        )
      }
      const answer = yield* worker(ctx, { op: "edit", path: p.inner, output: out.inner, cells, replacements })
      return done(ctx, { path: out.relative, ...answer }, `Edited ${p.relative} into ${out.relative}.`)
    })
})

export const documentFill = tool({
  name: "document_fill",
  description:
    "Fill a PDF form (AcroForm fields: text, checkbox true/false, a choice's option) or a DOCX template's {{placeholders}}. Without `fields`, lists the fields with their types, values and options. Writes `output`, or the document itself.",
  input: Schema.Struct({
    path: Path,
    fields: optional(
      Schema.Record(Schema.String, Schema.Union([Schema.String, Schema.Boolean])).annotate({
        description: "Field (or placeholder) name -> value."
      })
    ),
    output: Output
  }),
  handler: (input, ctx) =>
    Effect.gen(function*() {
      const p = yield* inner(input.path)
      const out = yield* inner(input.output ?? input.path, "output")
      const answer = yield* worker(ctx, { op: "fill", path: p.inner, output: out.inner, fields: input.fields })
      const fields = answer["fields"]
      const listed = Array.isArray(fields) ? JSON.stringify(fields) : "[]"
      return input.fields === undefined
        ? done(ctx, { path: p.relative, fields }, `Fields of ${p.relative}: ${listed}`)
        : done(ctx, { path: out.relative, fields }, `Filled ${p.relative} into ${out.relative}. Fields now: ${listed}`)
    })
})

const exportFormats = ["pdf", "docx", "xlsx", "pptx", "odt", "ods", "odp", "csv", "html", "txt"] as const

export const documentExport = tool({
  name: "document_export",
  description:
    "Convert a document with LibreOffice: DOCX/XLSX/PPTX/ODF to PDF, between Office and OpenDocument formats, a spreadsheet to CSV, a document to HTML or text, and PDF to DOCX where LibreOffice can. Writes `output`, by default the same name with the new extension.",
  input: Schema.Struct({ path: Path, format: OneOf(exportFormats, "The target format."), output: Output }),
  handler: (input, ctx) =>
    Effect.gen(function*() {
      const p = yield* inner(input.path)
      const target = input.output ??
        `${p.relative.slice(0, p.relative.length - posix.extname(p.relative).length)}.${input.format}`
      const out = yield* inner(target, "output")
      if (out.relative === p.relative) return yield* FileToolError.of("output: the export would overwrite its source")
      yield* worker(ctx, { op: "export", path: p.inner, format: input.format, output: out.inner })
      return done(ctx, { path: out.relative, format: input.format }, `Exported ${p.relative} to ${out.relative}.`)
    })
})

export const documentPreview = tool({
  name: "document_preview",
  description:
    "Render pages of a PDF, DOCX, XLSX or PPTX (96 dpi PNG, one file per page, `<name>-page-<n>.png` beside the document) to look at them, with view_media when the agent has it.",
  input: Schema.Struct({ path: Path, pages: optional(Text("Pages to render: `1` or `2-5` (default all).")) }),
  handler: (input, ctx) =>
    Effect.gen(function*() {
      const p = yield* inner(input.path)
      const range = yield* pageRange(input.pages)
      const stem = p.inner.slice(0, p.inner.length - posix.extname(p.inner).length)
      const answer = yield* worker(ctx, { op: "preview", path: p.inner, ...range, prefix: `${stem}-page` })
      const pages = Array.isArray(answer["pages"]) ? answer["pages"] : []
      const rendered = pages.flatMap((page: unknown) =>
        typeof page === "object" && page !== null && "path" in page && "page" in page && typeof page.path === "string"
          ? [{ page: Number(page.page), path: relative(page.path) }]
          : []
      )
      if (rendered.length === 0) return yield* FileToolError.of(`pages: ${p.relative} has no such page`)
      return done(
        ctx,
        { path: p.relative, pages: rendered },
        `Rendered ${rendered.map((r) => `page ${r.page} to ${r.path}`).join(", ")}.`
      )
    })
})

export const documentTools = [documentRead, documentCreate, documentEdit, documentFill, documentExport, documentPreview]
