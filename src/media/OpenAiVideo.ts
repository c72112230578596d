/**
 * OpenAI's videos API in its own wire shape, a job: `POST /videos` (model,
 * prompt, seconds, size; multipart with `input_reference` when the video
 * starts from an image) creates it, `GET /videos/{id}` is polled every
 * `PollEvery` on the run's Clock until it is `completed` or `failed` (each poll
 * reported to `progress`), and the bytes are downloaded from
 * `GET /videos/{id}/content` (or the `url` a compatible server answers). The
 * call is bounded by the step's time bound; when it is interrupted before the
 * video is done (the bound, the run cancelled), the job is cancelled with
 * `DELETE /videos/{id}`.
 */
import { Duration, Effect, Schema } from "effect"
import type { MediaRoute, ProviderEndpoint } from "./MediaConfig.ts"
import * as MediaHttp from "./MediaHttp.ts"

/** How often a job's status is read. */
export const PollEvery = Duration.seconds(5)

const Job = Schema.Struct({
  id: Schema.String,
  status: Schema.String,
  progress: Schema.optional(Schema.NullOr(Schema.Number)),
  url: Schema.optional(Schema.NullOr(Schema.String)),
  error: Schema.optional(Schema.NullOr(Schema.Struct({ message: Schema.optional(Schema.String) })))
})
type Job = typeof Job.Type

export interface GenerateVideo {
  readonly prompt: string
  readonly seconds: number
  readonly size?: string | undefined
  readonly source?: { readonly bytes: Uint8Array; readonly mediaType: string; readonly filename: string } | undefined
}

export interface Video {
  readonly bytes: Uint8Array
  readonly mediaType: string
  readonly jobId: string
}

const statusText = (job: Job) =>
  `Generating a video: ${job.status.replace("_", " ")}${typeof job.progress === "number" ? ` (${job.progress}%)` : ""}`

export const generate = (
  endpoint: ProviderEndpoint,
  route: MediaRoute,
  input: GenerateVideo,
  progress: (text: string) => Effect.Effect<void>
) =>
  Effect.gen(function*() {
    const auth = MediaHttp.authorization(endpoint, "bearer")
    const request = (method: "GET" | "POST" | "DELETE", path: string, body?: unknown) => ({
      route: route.route,
      method,
      url: `${endpoint.baseUrl}/videos${path}`,
      headers: auth,
      ...(body === undefined ? {} : { body })
    })
    const fields = {
      model: route.model,
      prompt: input.prompt,
      seconds: String(input.seconds),
      ...(input.size === undefined ? {} : { size: input.size })
    }
    let body: unknown = fields
    if (input.source !== undefined) {
      const form = new FormData()
      for (const [name, value] of Object.entries(fields)) form.append(name, value)
      form.append(
        "input_reference",
        new Blob([Buffer.from(input.source.bytes)], { type: input.source.mediaType }),
        input.source.filename
      )
      body = form
    }
    const created = yield* MediaHttp.json(request("POST", "", body), Job)
    const id = encodeURIComponent(created.id)
    const cancel = MediaHttp.send(request("DELETE", `/${id}`)).pipe(
      Effect.ignore,
      Effect.andThen(progress("Video generation cancelled"))
    )
    const finished = yield* Effect.gen(function*() {
      let job = created
      while (job.status !== "completed" && job.status !== "failed") {
        yield* progress(statusText(job))
        yield* Effect.sleep(PollEvery)
        job = yield* MediaHttp.json(request("GET", `/${id}`), Job)
      }
      if (job.status === "failed") {
        return yield* new MediaHttp.GenerationFailed({
          code: "media_job_failed",
          message: `${route.route} video job ${created.id} failed: ${job.error?.message ?? "no reason given"}`
        })
      }
      yield* progress(statusText(job))
      const content = yield* MediaHttp.bytes(
        typeof job.url === "string" && job.url !== ""
          ? { route: route.route, method: "GET", url: job.url }
          : request("GET", `/${id}/content`)
      )
      return content
    }).pipe(Effect.onInterrupt(() => cancel))
    return {
      bytes: finished.bytes,
      mediaType: finished.contentType.startsWith("video/") ? finished.contentType : "video/mp4",
      jobId: created.id
    } satisfies Video
  })
