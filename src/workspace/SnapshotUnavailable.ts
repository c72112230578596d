/**
 * A workspace's durable snapshot cannot be restored (its bytes do not match
 * their SHA-256, tar cannot read them, storage cannot return them) or stored.
 * The run loop maps it to the spec's `snapshot_unavailable` (section 7): the
 * run ends failed with that terminalReason and error code.
 */
import { Schema } from "effect"

export class SnapshotUnavailable extends Schema.TaggedError<SnapshotUnavailable>()("SnapshotUnavailable", {
  message: Schema.String
}) {
  readonly code = "snapshot_unavailable"
}
