/**
 * Durable runtime state kept on a user's behalf (workspace snapshots; browser
 * profiles when they come), encrypted at rest: the master key's AES-256-GCM
 * of SecretBox, the key id stored beside the bytes, so the master key rotates
 * as it does for secrets (SVC_MASTER_KEY_PREVIOUS keeps older keys for
 * opening only; whatever is sealed again is sealed under the current key).
 *
 * Each piece of state is bound to what it is and whose it is (associated data
 * `svc-state:<kind>:<owner>`): bytes copied from one thread's row into
 * another's, or from one kind of state to another, fail authentication like
 * altered bytes. Opening fails with SealedUnreadable (the key is not
 * configured, or the bytes do not authenticate), for the caller to report as
 * its own outcome (a workspace snapshot: `snapshot_unavailable`, spec 7).
 */
import { Context, Effect, Layer } from "effect"
import { type SealedBytes, type SealedUnreadable, SecretBox } from "./SecretBox.ts"

export { type SealedBytes, SealedUnreadable } from "./SecretBox.ts"

/** What a piece of runtime state is. */
export type StateKind = "workspace_snapshot" | "browser_profile"

/** The associated data that binds sealed state to its kind and owner. */
export const contextOf = (kind: StateKind, owner: string): string => `svc-state:${kind}:${owner}`

export class SealedState extends Context.Service<SealedState, {
  /** The id of the master key new state is sealed under: state under another key is sealed again on its next write. */
  readonly currentKeyId: string
  readonly seal: (kind: StateKind, owner: string, plaintext: Uint8Array) => Effect.Effect<SealedBytes>
  /** Opens state sealed under any configured master key, for the same kind and owner. */
  readonly open: (kind: StateKind, owner: string, sealed: SealedBytes) => Effect.Effect<Uint8Array, SealedUnreadable>
}>()("svc/SealedState") {
  static readonly make = (box: SecretBox["Service"]) =>
    SealedState.of({
      currentKeyId: box.currentKeyId,
      seal: (kind, owner, plaintext) => box.sealBytes(plaintext, contextOf(kind, owner)),
      open: (kind, owner, sealed) => box.openBytes(sealed, contextOf(kind, owner))
    })

  /** On the master keys of the SecretBox in context. */
  static readonly layer = Layer.effect(SealedState)(Effect.gen(function*() {
    return SealedState.make(yield* SecretBox)
  }))
}
