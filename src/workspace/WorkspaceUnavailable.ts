/**
 * The sandbox cannot run here: bubblewrap or prlimit missing, user namespaces
 * disabled, the workspace root not usable. The run loop maps it to the spec's
 * `workspace_unavailable` (section 7); a tool call that meets it mid-run gets
 * an error result with that code.
 */
import { Schema } from "effect"

export class WorkspaceUnavailable extends Schema.TaggedError<WorkspaceUnavailable>()("WorkspaceUnavailable", {
  message: Schema.String
}) {
  readonly code = "workspace_unavailable"
}
