/**
 * The document tools (issue 29) through the workspace's tool family, on the
 * real sandbox with the host's LibreOffice, poppler and Node: each result is
 * read back with a library of the test's own (mammoth, pdf-lib, exceljs, a
 * PNG's header). One workspace for the file: LibreOffice's profile is made
 * once and its later starts are faster.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import ExcelJS from "exceljs"
import JSZip from "jszip"
import mammoth from "mammoth"
import { execFileSync } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { PDFDocument } from "pdf-lib"
import type { ToolFamily } from "../../../src/tools/ToolFamily.ts"
import type { ToolOutcome } from "../../../src/tools/ToolOutcome.ts"
import { Sandbox, type Workspace } from "../../../src/workspace/Sandbox.ts"
import * as WorkspaceTools from "../../../src/workspace/WorkspaceTools.ts"
import { documentLimits, sandboxLayer } from "../../support/TestSandbox.ts"
import { docxBomb } from "../../support/ZipBomb.ts"

const opened = Effect.gen(function*() {
  const sandbox = yield* Sandbox
  const workspace = yield* sandbox.open("ws_documents", documentLimits)
  const tools = WorkspaceTools.make({ sandbox, workspace, shell: false, documents: true, env: {}, secrets: [] })
  return { workspace, tools }
})

const call = (tools: ToolFamily, name: string, input: unknown): Effect.Effect<ToolOutcome> => {
  const run = tools.call(name, input, { id: "tc_test", step: 0 })
  assert.isDefined(run, `${name} is a tool of the family`)
  return run ?? Effect.die("unreachable")
}

const ok = (outcome: ToolOutcome) => {
  assert.isFalse(outcome.isError, JSON.stringify(outcome.output))
  return outcome
}
const failed = (outcome: ToolOutcome, code: string) => {
  assert.isTrue(outcome.isError, JSON.stringify(outcome.output))
  const output = outcome.output
  assert.isTrue(typeof output === "object" && output !== null && "error" in output)
  const error = typeof output === "object" && output !== null && "error" in output ? output.error : undefined
  assert.strictEqual(typeof error === "object" && error !== null && "code" in error ? error.code : undefined, code)
  return outcome.text
}

const hostFile = (workspace: Workspace, path: string) => join(workspace.dir, path)

/** LibreOffice starts slowly on a busy machine: a call that runs it may take tens of seconds. */
const slow = { timeout: 240_000 }

describe("document tools", () => {
  layer(sandboxLayer, { excludeTestServices: true })((it) => {
    it.effect("offers the six document tools with documents, none without", () =>
      Effect.gen(function*() {
        const { tools } = yield* opened
        assert.deepStrictEqual(tools.specs.map((s) => s.name), [
          ...WorkspaceTools.fileTools.map((t) => t.name),
          "document_read",
          "document_create",
          "document_edit",
          "document_fill",
          "document_export",
          "document_preview"
        ])
        const sandbox = yield* Sandbox
        const plain = WorkspaceTools.make({
          sandbox,
          workspace: (yield* opened).workspace,
          shell: false,
          env: {},
          secrets: []
        })
        assert.isUndefined(plain.call("document_read", { path: "a.docx" }, { id: "tc", step: 0 }))
      }))

    it.effect(
      "document_create makes a DOCX from Markdown with a table; mammoth reads the table back; document_read too",
      () =>
        Effect.gen(function*() {
          const { tools, workspace } = yield* opened
          const content =
            "# Orders\n\nThe **March** orders.\n\n| Item | Qty |\n| --- | --- |\n| apples | 3 |\n| pears | 5 |\n\n- checked\n- sent\n"
          const created = ok(
            yield* call(tools, "document_create", { path: "out/orders.docx", format: "docx", content })
          )
          assert.deepStrictEqual(created.output, { path: "out/orders.docx", format: "docx" })
          const html = (yield* Effect.promise(() =>
            mammoth.convertToHtml({ buffer: readFileSync(hostFile(workspace, "out/orders.docx")) })
          )).value
          assert.include(html, "<h1>Orders</h1>")
          assert.include(html, "<td><p>apples</p></td><td><p>3</p></td>")
          assert.include(html, "<td><p>pears</p></td><td><p>5</p></td>")
          const read = ok(yield* call(tools, "document_read", { path: "out/orders.docx" }))
          assert.include(read.text, "# Orders")
          assert.include(read.text, "| apples | 3 |")
          assert.include(read.text, "-   checked")
        }),
      { timeout: 120_000 }
    )

    it.effect(
      "document_create embeds a workspace image of Markdown's ![alt](path) in a DOCX at its pixel size",
      () =>
        Effect.gen(function*() {
          const { tools, workspace } = yield* opened
          execFileSync("convert", ["-size", "40x30", "xc:blue", hostFile(workspace, "logo.png")])
          const png = readFileSync(hostFile(workspace, "logo.png"))
          ok(
            yield* call(tools, "document_create", {
              path: "with-logo.docx",
              format: "docx",
              content: "# Report\n\n![Our logo](logo.png)\n\nAfter the logo."
            })
          )
          const zip = yield* Effect.promise(() => JSZip.loadAsync(readFileSync(hostFile(workspace, "with-logo.docx"))))
          const media = Object.keys(zip.files).filter((name) => name.startsWith("word/media/"))
          assert.strictEqual(media.length, 1, media.join(", "))
          const embedded = yield* Effect.promise(() =>
            zip.file(media[0] ?? "")?.async("nodebuffer") ?? Promise.resolve(undefined)
          )
          assert.deepStrictEqual(embedded, png)
          const xml = (yield* Effect.promise(() =>
            zip.file("word/document.xml")?.async("string") ?? Promise.resolve("")
          )) ?? ""
          // 40 x 30 px at 9525 EMU a pixel; the alt text as the picture's description.
          assert.include(xml, "<wp:extent cx=\"381000\" cy=\"285750\"/>")
          assert.match(xml, /descr="Our logo"/)
        }),
      { timeout: 120_000 }
    )

    it.effect(
      "document_fill lists a DOCX template's placeholders and fills them; mammoth reads the text",
      () =>
        Effect.gen(function*() {
          const { tools, workspace } = yield* opened
          ok(
            yield* call(tools, "document_create", {
              path: "letter.docx",
              format: "docx",
              content: "Dear {{name}},\n\nYour order **{{order}}** has shipped."
            })
          )
          const listed = ok(yield* call(tools, "document_fill", { path: "letter.docx" }))
          assert.deepStrictEqual(listed.output, {
            path: "letter.docx",
            fields: [{ name: "name", type: "placeholder" }, { name: "order", type: "placeholder" }]
          })
          ok(
            yield* call(tools, "document_fill", {
              path: "letter.docx",
              fields: { name: "Ada", order: "A-17" },
              output: "letter-ada.docx"
            })
          )
          const text = yield* Effect.promise(() =>
            mammoth.extractRawText({ buffer: readFileSync(hostFile(workspace, "letter-ada.docx")) })
          )
          assert.strictEqual(text.value, "Dear Ada,\n\nYour order A-17 has shipped.\n\n")
        }),
      { timeout: 120_000 }
    )

    it.effect(
      "document_fill lists a PDF form's fields, fills them; pdf-lib reads the values",
      () =>
        Effect.gen(function*() {
          const { tools, workspace } = yield* opened
          const form = yield* Effect.promise(async () => {
            const doc = await PDFDocument.create()
            const page = doc.addPage([400, 300])
            const f = doc.getForm()
            f.createTextField("name").addToPage(page, { x: 20, y: 200, width: 200, height: 24 })
            f.createCheckBox("agree").addToPage(page, { x: 20, y: 150, width: 16, height: 16 })
            const plan = f.createDropdown("plan")
            plan.addOptions(["basic", "pro"])
            plan.addToPage(page, { x: 20, y: 100, width: 120, height: 24 })
            return doc.save()
          })
          writeFileSync(hostFile(workspace, "form.pdf"), form)
          const listed = ok(yield* call(tools, "document_fill", { path: "form.pdf" }))
          assert.deepStrictEqual(listed.output, {
            path: "form.pdf",
            fields: [
              { name: "name", type: "text", value: "" },
              { name: "agree", type: "checkbox", value: false },
              { name: "plan", type: "dropdown", value: "", options: ["basic", "pro"] }
            ]
          })
          ok(
            yield* call(tools, "document_fill", {
              path: "form.pdf",
              fields: { name: "Ada Lovelace", agree: true, plan: "pro" },
              output: "form-filled.pdf"
            })
          )
          const filled = yield* Effect.promise(() =>
            PDFDocument.load(readFileSync(hostFile(workspace, "form-filled.pdf")))
          )
          const f = filled.getForm()
          assert.strictEqual(f.getTextField("name").getText(), "Ada Lovelace")
          assert.isTrue(f.getCheckBox("agree").isChecked())
          assert.deepStrictEqual(f.getDropdown("plan").getSelected(), ["pro"])
          const wrong = failed(
            yield* call(tools, "document_fill", { path: "form.pdf", fields: { plan: "gold" } }),
            "document_error"
          )
          assert.include(wrong, "field \"plan\" takes one of [\"basic\",\"pro\"]")
        }),
      { timeout: 120_000 }
    )

    it.effect(
      "document_create writes XLSX cells with a formula; after LibreOffice's recalculation exceljs reads its value",
      () =>
        Effect.gen(function*() {
          const { tools, workspace } = yield* opened
          ok(
            yield* call(tools, "document_create", {
              path: "totals.xlsx",
              format: "xlsx",
              sheets: [{ name: "Data", rows: [["Item", "Qty"], ["a", 2], ["b", 3], ["Total", "=SUM(B2:B3)*2"]] }]
            })
          )
          const workbook = new ExcelJS.Workbook()
          yield* Effect.promise(() => workbook.xlsx.readFile(hostFile(workspace, "totals.xlsx")))
          assert.deepStrictEqual(workbook.getWorksheet("Data")?.getCell("B4").value, {
            formula: "SUM(B2:B3)*2",
            result: 10
          })
          const read = ok(yield* call(tools, "document_read", { path: "totals.xlsx" }))
          assert.include(read.text, "| 4 | Total | 10 (=SUM(B2:B3)*2) |")
          // A cell write is recomputed the same way.
          const edited = ok(
            yield* call(tools, "document_edit", { path: "totals.xlsx", edits: [{ cell: "B2", value: 5 }] })
          )
          assert.deepStrictEqual(edited.output, { path: "totals.xlsx", cells: 1 })
          const again = new ExcelJS.Workbook()
          yield* Effect.promise(() => again.xlsx.readFile(hostFile(workspace, "totals.xlsx")))
          assert.deepStrictEqual(again.getWorksheet("Data")?.getCell("B4").value, {
            formula: "SUM(B2:B3)*2",
            result: 16
          })
        }),
      slow
    )

    it.effect(
      "document_export turns the DOCX into a PDF; document_preview renders page 1 to a 96 dpi A4 PNG",
      () =>
        Effect.gen(function*() {
          const { tools, workspace } = yield* opened
          const exported = ok(yield* call(tools, "document_export", { path: "out/orders.docx", format: "pdf" }))
          assert.deepStrictEqual(exported.output, { path: "out/orders.pdf", format: "pdf" })
          const pdf = yield* Effect.promise(() => PDFDocument.load(readFileSync(hostFile(workspace, "out/orders.pdf"))))
          assert.strictEqual(pdf.getPageCount(), 1)
          const preview = ok(yield* call(tools, "document_preview", { path: "out/orders.pdf", pages: "1" }))
          assert.deepStrictEqual(preview.output, {
            path: "out/orders.pdf",
            pages: [{ page: 1, path: "out/orders-page-1.png" }]
          })
          const png = readFileSync(hostFile(workspace, "out/orders-page-1.png"))
          assert.strictEqual(png.subarray(1, 4).toString(), "PNG")
          // A4 (595 x 842 points) at 96 dpi.
          assert.deepStrictEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [794, 1123])
        }),
      slow
    )

    it.effect("a zip bomb and a malformed file fail the call, and the next call works", () =>
      Effect.gen(function*() {
        const { tools, workspace } = yield* opened
        writeFileSync(hostFile(workspace, "bomb.docx"), yield* Effect.promise(() => docxBomb(300 * 1024 * 1024)))
        const bomb = failed(yield* call(tools, "document_read", { path: "bomb.docx" }), "document_error")
        assert.include(bomb, "would inflate to 314572800 bytes, over the limit of 268435456 bytes")
        // Before LibreOffice would inflate it too.
        assert.include(
          failed(yield* call(tools, "document_export", { path: "bomb.docx", format: "pdf" }), "document_error"),
          "bomb.docx would inflate to 314572800 bytes"
        )
        writeFileSync(hostFile(workspace, "junk.docx"), Buffer.from("this is not a zip archive at all".repeat(10)))
        assert.include(
          failed(yield* call(tools, "document_read", { path: "junk.docx" }), "document_error"),
          "junk.docx is not a valid Office file"
        )
        writeFileSync(hostFile(workspace, "junk.pdf"), Buffer.from("%PDF-1.7\n garbage"))
        assert.include(failed(yield* call(tools, "document_fill", { path: "junk.pdf" }), "document_error"), "junk.pdf")
        assert.include(
          failed(yield* call(tools, "document_read", { path: "../etc/passwd.pdf" }), "workspace_error"),
          "outside the workspace"
        )
        ok(yield* call(tools, "document_read", { path: "out/orders.docx" }))
      }), { timeout: 120_000 })

    it.effect(
      "document_create builds a slide deck; document_read reads its slides; document_edit replaces text in it",
      () =>
        Effect.gen(function*() {
          const { tools } = yield* opened
          const created = ok(
            yield* call(tools, "document_create", {
              path: "deck.pptx",
              format: "pptx",
              content: "# Quarterly review\n\nWhere we stand\n\n## Numbers\n\n- revenue up 10%\n- costs down 2%\n"
            })
          )
          assert.deepStrictEqual(created.output, { path: "deck.pptx", format: "pptx", slides: 2 })
          ok(yield* call(tools, "document_edit", { path: "deck.pptx", edits: [{ find: "up 10%", replace: "up 12%" }] }))
          const read = ok(yield* call(tools, "document_read", { path: "deck.pptx", pages: "2" }))
          assert.strictEqual(read.text, "## Slide 2\n\nNumbers\n\n• revenue up 12%\n\n• costs down 2%")
          const absent = failed(
            yield* call(tools, "document_edit", {
              path: "deck.pptx",
              edits: [{ find: "no such words", replace: "x" }]
            }),
            "document_error"
          )
          assert.include(absent, "text not found in deck.pptx")
        }),
      slow
    )
  })
})
