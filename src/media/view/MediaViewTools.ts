/**
 * Opens view_media for a run with `capabilities.mediaView` (RunTools): the
 * family in the run's context, which sources it can read (the guarded client,
 * the workspace's files and artifacts, the managed workspace), where its
 * images are stored, the run's fidelity, and the run's own model route for
 * analysis and transcription.
 */
import { Context, Effect, Layer } from "effect"
import type { RunId, ThreadId } from "../../../domain/Ids.ts"
import type { Principal } from "../../../domain/Principal.ts"
import { Artifacts } from "../../artifacts/Artifacts.ts"
import { Files } from "../../artifacts/Files.ts"
import { ServiceConfig } from "../../config/ServiceConfig.ts"
import { Models } from "../../model/Models.ts"
import { Outbound } from "../../outbound/Outbound.ts"
import type { FileAccess, ToolFamily } from "../../tools/ToolFamily.ts"
import { transcriberFor } from "./Transcription.ts"
import * as ViewMediaTool from "./ViewMediaTool.ts"

export interface ViewOpen {
  readonly principal: Principal
  readonly runId: RunId
  readonly threadId: ThreadId
  /** The run's model route (its band's, frozen in the plan). */
  readonly route: string
  readonly output: "auto" | "analysis"
  readonly fidelity: "standard" | "spatial"
  readonly workspace: FileAccess | undefined
}

export class MediaViewTools extends Context.Service<MediaViewTools, {
  readonly family: (open: ViewOpen) => ToolFamily
}>()("svc/MediaViewTools") {
  static readonly layer = Layer.effect(MediaViewTools)(
    Effect.gen(function*() {
      const outbound = yield* Outbound
      const artifacts = yield* Artifacts
      const files = yield* Files
      const models = yield* Models
      const config = yield* ServiceConfig
      return {
        family: (open) =>
          ViewMediaTool.family({
            access: {
              principal: open.principal,
              fetchUntrusted: outbound.fetchUntrusted,
              artifacts,
              files,
              workspace: open.workspace
            },
            store: { artifacts, owner: open.principal, runId: open.runId, threadId: open.threadId },
            output: open.output,
            fidelity: open.fidelity,
            model: models.provider(open.route),
            transcriber: transcriberFor(config, open.route)
          })
      }
    })
  )
}
