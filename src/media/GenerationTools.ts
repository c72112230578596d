/**
 * The tool family of `capabilities.media`: the run's kinds (frozen in its
 * plan) each give their tools: image -> generate_image, edit_image; video ->
 * generate_video; speech -> generate_speech; music -> generate_music;
 * soundEffect -> generate_sound_effect. A generation's failure (the
 * provider's refusal, a failed job, a source that cannot be read, a cost
 * limit) is a failure the model reads; the run goes on.
 */
import type { MediaKind } from "../../domain/Media.ts"
import * as ToolDef from "../tools/ToolDef.ts"
import type { ToolFamily } from "../tools/ToolFamily.ts"
import * as ToolOutcome from "../tools/ToolOutcome.ts"
import { generateMusic, generateSoundEffect, generateSpeech, generateVideo } from "./GenerateAvTools.ts"
import { editImage, generateImage } from "./GenerateImageTools.ts"
import type { MediaCall } from "./MediaOutput.ts"

const toolsOf = {
  image: [generateImage, editImage],
  video: [generateVideo],
  speech: [generateSpeech],
  music: [generateMusic],
  soundEffect: [generateSoundEffect]
} as const

/** The tool names each kind gives (public contract). */
export const toolNamesOf = (kind: MediaKind): ReadonlyArray<string> => toolsOf[kind].map((t) => t.name)

/** The family of a run with media; `call` the context of every call but its id and step. */
export const family = (kinds: ReadonlyArray<MediaKind>, call: Omit<MediaCall, "call">): ToolFamily =>
  ToolDef.family(
    kinds.flatMap((k): ReadonlyArray<ToolDef.ToolDef<MediaCall, { code: string; message: string }>> => toolsOf[k]),
    {
      context: (ref) => ({ ...call, call: ref }),
      recover: (error) =>
        "_tag" in error && error._tag === "GenerationFailed"
          ? ToolOutcome.failure(error.code, error.message)
          : ToolOutcome.failure(error.code, `the generated file could not be stored: ${error.message}`)
    }
  )
