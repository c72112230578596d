/** Where an attached file goes (spec 4.3 rule 1), and its workspace path. */
import { assert, describe, it } from "@effect/vitest"
import { AttachmentLimits, placementOf, workspacePaths } from "../../../src/runs/AttachmentRules.ts"

describe("AttachmentRules", () => {
  it("images, PDFs and text go inline up to their limits; the rest to the workspace, or are refused without one", () => {
    const cases: ReadonlyArray<[string, number, boolean, "image" | "document" | "text" | "workspace"]> = [
      ["image/png", 10, false, "image"],
      ["IMAGE/JPEG", 10, false, "image"],
      ["image/webp", AttachmentLimits.imageBytes, false, "image"],
      ["image/png", AttachmentLimits.imageBytes + 1, true, "workspace"],
      ["image/svg+xml", 10, false, "text"],
      ["application/pdf", 10, false, "document"],
      ["text/plain; charset=utf-8", 10, false, "text"],
      ["application/json", 10, false, "text"],
      ["application/vnd.api+json", 10, false, "text"],
      ["text/csv", AttachmentLimits.textBytes + 1, true, "workspace"],
      ["application/zip", 10, true, "workspace"],
      ["application/octet-stream", 10, true, "workspace"]
    ]
    for (const [type, bytes, workspace, as] of cases) {
      assert.deepStrictEqual(placementOf(type, bytes, workspace), { as }, `${type} ${bytes} ${workspace}`)
    }
  })

  it("without a workspace, an unsupported type or an over-limit file is refused with the reason", () => {
    assert.deepStrictEqual(placementOf("application/zip", 10, false), {
      refused:
        "its media type application/zip cannot be shown to the model (images png/jpeg/gif/webp, PDF and text files can); " +
        "an agent with a managed workspace receives any file there"
    })
    assert.deepStrictEqual(placementOf("image/gif", AttachmentLimits.imageBytes + 1, false), {
      refused:
        `it is ${
          AttachmentLimits.imageBytes + 1
        } bytes, over the ${AttachmentLimits.imageBytes}-byte limit for an image sent to the model; ` +
        "an agent with a managed workspace receives it there"
    })
  })

  it("workspace paths are one safe segment under attachments/, distinct within the input", () => {
    assert.deepStrictEqual(
      workspacePaths([
        "report.pdf",
        "report.pdf",
        "../../etc/passwd",
        ".hidden",
        "a\u0000b.txt",
        "",
        "report.pdf",
        "noext",
        "noext"
      ]),
      [
        "attachments/report.pdf",
        "attachments/report (2).pdf",
        "attachments/passwd",
        "attachments/hidden",
        "attachments/a_b.txt",
        "attachments/file",
        "attachments/report (3).pdf",
        "attachments/noext",
        "attachments/noext (2)"
      ]
    )
  })
})
