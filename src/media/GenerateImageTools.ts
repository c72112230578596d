/**
 * `generate_image { prompt, size?, count?, background? }` and
 * `edit_image { source, prompt, mask? }` on the run's image route (OpenAI's
 * images API, ./OpenAiImages.ts). Priced per image: the call is checked
 * against the run's cost limits for `count` images before the provider is
 * called, and charged for the images it answered.
 */
import { Effect, Schema } from "effect"
import * as ToolDef from "../tools/ToolDef.ts"
import { Count, NonEmpty, OneOf, optional } from "../tools/ToolInput.ts"
import { charge, ensureAffordable, type MediaCall, output, routeOf } from "./MediaOutput.ts"
import * as OpenAiImages from "./OpenAiImages.ts"

/** At most this many images per call. */
export const MaxImages = 4

const imagesResult = (ctx: MediaCall, toolName: string, route: string, images: ReadonlyArray<OpenAiImages.Image>) =>
  Effect.gen(function*() {
    const outputs = yield* Effect.forEach(images, (image, i) => output(ctx, toolName, i, image))
    const revised = images.flatMap((i) => (i.revisedPrompt === undefined ? [] : [i.revisedPrompt]))
    return { route, images: outputs, ...(revised.length === 0 ? {} : { revisedPrompts: revised }) }
  })

export const generateImage = ToolDef.make({
  name: "generate_image",
  description: "Generate images from a text prompt. Each image is stored as a deliverable for the user (and placed " +
    "under media/ in the workspace when there is one); the result says how to refer to each (`artifact.ref`, " +
    "`artifact.block`, `export.url`).",
  input: Schema.Struct({
    prompt: NonEmpty("What the image shows, in detail."),
    size: optional(OneOf(["auto", "1024x1024", "1536x1024", "1024x1536"], "Width x height in pixels.")),
    count: optional(
      Count(`How many images to make (1 to ${MaxImages}; default 1).`).check(Schema.isLessThanOrEqualTo(MaxImages))
    ),
    background: optional(OneOf(["auto", "transparent", "opaque"], "The background: transparent for a cut-out."))
  }),
  handler: (input, ctx: MediaCall) =>
    Effect.gen(function*() {
      const { planned, route } = yield* routeOf(ctx, "image")
      const count = input.count ?? 1
      yield* ensureAffordable(ctx, planned, count, `${count} image${count === 1 ? "" : "s"} on ${route.route}`)
      yield* ctx.progress(`Generating ${count === 1 ? "an image" : `${count} images`}`)
      const images = yield* OpenAiImages.generate(ctx.endpoints.openai, route, { ...input, count })
      const costCents = yield* charge(ctx, planned, "generate_image", images.length)
      return { ...(yield* imagesResult(ctx, "generate_image", route.route, images)), costCents }
    })
})

export const editImage = ToolDef.make({
  name: "edit_image",
  description: "Edit an image from a prompt: `source` is a workspace path, an uploaded file id (file_...) or an " +
    "artifact id (art_..., e.g. an image generated earlier); `mask` (same forms) marks with transparency where to " +
    "change it. The edited image is a deliverable, as with generate_image.",
  input: Schema.Struct({
    source: NonEmpty("The image to edit: workspace path, file id or artifact id."),
    prompt: NonEmpty("What to change."),
    mask: optional(
      NonEmpty("A PNG whose transparent pixels mark where to edit: workspace path, file id or artifact id.")
    )
  }),
  handler: (input, ctx: MediaCall) =>
    Effect.gen(function*() {
      const { planned, route } = yield* routeOf(ctx, "image")
      yield* ensureAffordable(ctx, planned, 1, `an image edit on ${route.route}`)
      const source = yield* ctx.sources("source", input.source)
      const mask = input.mask === undefined ? undefined : yield* ctx.sources("mask", input.mask)
      yield* ctx.progress("Editing an image")
      const images = yield* OpenAiImages.edit(ctx.endpoints.openai, route, { prompt: input.prompt, source, mask })
      const costCents = yield* charge(ctx, planned, "edit_image", images.length)
      return { ...(yield* imagesResult(ctx, "edit_image", route.route, images)), costCents }
    })
})
