/**
 * workspace.documents and workspace.mediaEditing through the whole service
 * (issue 29): on a host whose runtimes were found at start, the flags are
 * accepted and carry forward on PATCH when omitted (spec 4.1 rule 2), and one
 * thread's agent fills a form, builds a spreadsheet and a slide deck,
 * previews the form and trims a clip on the real sandbox; on a host without
 * them (the start-time check's result set through the configuration), they
 * are 400 on create, validate and update.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { PDFDocument } from "pdf-lib"
import * as HostRuntimes from "../../src/documents/HostRuntimes.ts"
import * as Collection from "../support/Collection.ts"
import { agentWithThread, failureTextsOf, send, successesOf, toolStep } from "../support/Conversation.ts"
import * as TestServer from "../support/TestServer.ts"

const both = { type: "managed", documents: true, mediaEditing: true } as const

const refused = (method: string, path: string, body: unknown, field: string, code: string) =>
  Effect.gen(function*() {
    const error = yield* TestServer.expectError(
      yield* TestServer.request(method, path, { body }),
      400,
      "invalid_request_error",
      code
    )
    assert.deepStrictEqual(error.details, { field })
    return error
  })

TestServer.suite({ hostRuntimes: HostRuntimes.none })("documents and media editing on a host without them", (it) => {
  it.effect("create, validate and update refuse the flags with the spec's codes, naming what the host lacks", () =>
    Effect.gen(function*() {
      const documents = yield* refused(
        "POST",
        "/v1/agents",
        { workspace: { type: "managed", documents: true } },
        "workspace.documents",
        "managed_documents_unconfigured"
      )
      assert.strictEqual(
        documents.message,
        "workspace.documents is set but this deployment's host lacks the document runtime: soffice, pdftoppm, pdftotext, node."
      )
      yield* refused(
        "POST",
        "/v1/agents/validate",
        { workspace: { type: "managed", mediaEditing: true } },
        "workspace.mediaEditing",
        "managed_media_editing_unconfigured"
      )
      const agent = yield* Collection.agents.create({ workspace: { type: "managed" } })
      yield* refused(
        "PATCH",
        `/v1/agents/${agent.id}`,
        { workspace: { type: "managed", documents: true } },
        "workspace.documents",
        "managed_documents_unconfigured"
      )
    }))
})

TestServer.suite({ hostRuntimes: HostRuntimes.probe() })("documents and media editing", (it) => {
  it.effect("the flags are accepted, and carry forward on PATCH when omitted while other workspace fields replace", () =>
    Effect.gen(function*() {
      const valid = yield* TestServer.request("POST", "/v1/agents/validate", { body: { workspace: both } })
      assert.deepStrictEqual([valid.status, valid.json], [200, { valid: true }])
      const agent = yield* Collection.agents.create({ workspace: { ...both, resources: "large" } })
      assert.include(agent.workspace, { documents: true, mediaEditing: true, resources: "large" })
      const kept = yield* Collection.agents.update(agent.id, { workspace: { type: "managed", shell: false } })
      assert.deepStrictEqual(kept.workspace, {
        type: "managed",
        filesystem: true,
        shell: false,
        documents: true,
        mediaEditing: true
      })
      const one = yield* Collection.agents.update(agent.id, { workspace: { type: "managed", mediaEditing: false } })
      assert.include(one.workspace, { documents: true, mediaEditing: false })
    }))

  it.effect(
    "one thread fills a form, builds a spreadsheet and a slide deck, previews the form and trims a clip",
    () =>
      Effect.gen(function*() {
        const { thread } = yield* agentWithThread({ workspace: { ...both, shell: true, network: { mode: "offline" } } })
        const dir = join(TestServer.testWorkspaceRoot, "workspaces", thread.id)
        // One request per LibreOffice call: on a loaded machine one may take a minute or more.
        const first = yield* send(
          thread.id,
          [
            toolStep("bash", {
              command:
                "ffmpeg -hide_banner -loglevel error -nostdin -f lavfi -i testsrc=duration=3:size=160x120:rate=10 -pix_fmt yuv420p clip.mp4"
            }),
            toolStep("document_create", {
              path: "budget.xlsx",
              format: "xlsx",
              sheets: [{ rows: [["Item", "Cost"], ["rent", 1200], ["food", 300], ["Total", "=SUM(B2:B3)"]] }]
            })
          ].join("\n")
        )
        assert.deepStrictEqual(failureTextsOf(first.parsed.chunks), [])
        assert.deepStrictEqual(successesOf(first.parsed.chunks)[1], { path: "budget.xlsx", format: "xlsx" })
        const second = yield* send(
          thread.id,
          toolStep("document_create", {
            path: "deck.pptx",
            format: "pptx",
            content: "# Budget\n\nMarch\n\n## Total\n\n- 1500"
          })
        )
        assert.deepStrictEqual(successesOf(second.parsed.chunks), [{ path: "deck.pptx", format: "pptx", slides: 2 }])

        // A form the user put in the workspace.
        const form = yield* Effect.promise(async () => {
          const doc = await PDFDocument.create()
          const page = doc.addPage([300, 200])
          doc.getForm().createTextField("applicant").addToPage(page, { x: 10, y: 100, width: 200, height: 20 })
          return doc.save()
        })
        writeFileSync(join(dir, "form.pdf"), form)
        const third = yield* send(
          thread.id,
          [
            toolStep("document_fill", {
              path: "form.pdf",
              fields: { applicant: "Grace Hopper" },
              output: "filled.pdf"
            }),
            toolStep("document_preview", { path: "filled.pdf" }),
            toolStep("media_edit", { operation: "trim", input: "clip.mp4", output: "short.mp4", start: 0.5, end: 2 }),
            toolStep("document_read", { path: "budget.xlsx" }),
            toolStep("document_read", { path: "deck.pptx" })
          ].join("\n")
        )
        assert.deepStrictEqual(failureTextsOf(third.parsed.chunks), [])
        const outputs = successesOf(third.parsed.chunks)
        assert.deepStrictEqual(outputs.slice(0, 3), [
          { path: "filled.pdf", fields: [{ name: "applicant", type: "text", value: "Grace Hopper" }] },
          { path: "filled.pdf", pages: [{ page: 1, path: "filled-page-1.png" }] },
          { operation: "trim", output: "short.mp4" }
        ])
        assert.include(JSON.stringify(outputs[3]), "| 4 | Total | 1500 (=SUM(B2:B3)) |")
        assert.include(JSON.stringify(outputs[4]), "## Slide 2\\n\\nTotal\\n\\n• 1500")

        const filled = yield* Effect.promise(() => PDFDocument.load(readFileSync(join(dir, "filled.pdf"))))
        assert.strictEqual(filled.getForm().getTextField("applicant").getText(), "Grace Hopper")
        const png = readFileSync(join(dir, "filled-page-1.png"))
        // 300 x 200 points at 96 dpi.
        assert.deepStrictEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [400, 267])
        const duration = execFileSync("ffprobe", [
          "-v",
          "error",
          "-show_entries",
          "format=duration",
          "-of",
          "csv=p=0",
          join(dir, "short.mp4")
        ], { encoding: "utf8" })
        assert.approximately(Number(duration), 1.5, 0.15)
      }),
    { timeout: 600_000 }
  )
})
