/**
 * Oversized tool results archived through the agent's oversized-result
 * handler (spec 4.6 rule 5, 2.1.2 `artifacts.oversizedToolResults`), when no
 * family can keep them in a workspace: the whole text goes to the handler,
 * and the model reads the cut-down preview plus a note naming the handler's
 * artifactId, never the whole text. When the handler fails, the overflow is
 * `recovery: "none"` with the handler's error, and the model is told only
 * the preview is available.
 */
import { Effect } from "effect"
import { withNote } from "./ResultSpill.ts"
import type { Archive } from "./ToolFamily.ts"
import type { ToolOutcome } from "./ToolOutcome.ts"

/** What the model is told of a failure: no handler URL or answer, only what kind of failure it was. */
const failureNotes: Record<string, string> = {
  not_found: "the result handler no longer exists",
  timeout: "the result handler did not answer in time",
  status: "the result handler answered with an error status",
  unreachable: "the result handler could not be reached",
  refused: "the result handler's URL was refused",
  invalid_response: "the result handler's answer was invalid"
}

/** Archives an over-cap result's whole text through `archive`; the outcome says where (`overflow.recovery`) and the model is told. */
export const recover = (
  outcome: ToolOutcome,
  call: { readonly id: string; readonly name: string },
  step: number,
  archive: Archive
): Effect.Effect<ToolOutcome> => {
  const overflow = outcome.overflow
  if (overflow === undefined) return Effect.succeed(outcome)
  const resultHandlerId = archive.resultHandlerId
  return archive.send(call, step, overflow.full).pipe(
    Effect.map(({ artifactId, url }) =>
      withNote(
        {
          ...outcome,
          overflow: {
            ...overflow,
            recovery: { kind: "remote-handler", resultHandlerId, artifactId, ...(url === undefined ? {} : { url }) }
          }
        },
        `[The full result (${overflow.bytes} bytes) was archived by the agent's result handler as artifact ${
          JSON.stringify(artifactId)
        }; ` +
          "it is not available in this conversation: only this preview is.]"
      )
    ),
    Effect.catch((e) =>
      Effect.succeed(
        withNote(
          {
            ...outcome,
            overflow: {
              ...overflow,
              recovery: {
                kind: "none",
                message: e.message,
                resultHandlerId,
                error: { code: e.code, reason: e.reason, message: e.message }
              }
            }
          },
          `[Only this preview is available: the full result could not be archived (${
            failureNotes[e.reason] ?? "the result handler failed"
          }).]`
        )
      )
    )
  )
}
