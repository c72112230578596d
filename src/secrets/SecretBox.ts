/**
 * Encryption at rest for secret values and signing secrets: AES-256-GCM under
 * a master key, with the key id stored beside each ciphertext so the master
 * key can be rotated (old keys stay configured for decryption only).
 *
 * Master keys: SVC_MASTER_KEY (current, 32 bytes as base64 or 64 hex digits)
 * and SVC_MASTER_KEY_PREVIOUS (comma-separated older keys). The embedded
 * default generates `master.key` (mode 0600) in the data directory. A key's
 * id is the first 16 hex digits of its SHA-256.
 *
 * Bytes (`sealBytes`/`openBytes`): the same AES-256-GCM, for durable runtime
 * state (src/secrets/SealedState.ts), bound to a context string as associated
 * data, and failing with SealedUnreadable rather than dying: state that cannot
 * be opened is an outcome its caller reports.
 *
 * Signatures (`sign`/`verify`): HMAC-SHA256 of a message under a key derived
 * from the master key for one purpose (HMAC-SHA256(master key, "svc-sign:" +
 * purpose)), so a signature made for one purpose is worthless for another and
 * the master key itself never signs anything. Verification accepts every
 * configured key, so signatures survive a key rotation.
 */
import { Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import type { Sealed } from "../store/Sealed.ts"

export type { Sealed } from "../store/Sealed.ts"

export interface MasterKey {
  readonly id: string
  readonly key: Buffer
}

export const keyIdOf = (key: Buffer): string => createHash("sha256").update(key).digest("hex").slice(0, 16)

/** Parses a key given as base64 (32 bytes) or 64 hex digits. */
export const parseMasterKey = (text: string): MasterKey | string => {
  const trimmed = text.trim()
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, "hex") : Buffer.from(trimmed, "base64")
  if (key.length !== 32) return "a master key must be 32 bytes, given as base64 or as 64 hex digits"
  return { id: keyIdOf(key), key }
}

export const generateMasterKey = (): string => randomBytes(32).toString("base64")

/** Bytes as stored: iv (12 bytes) || tag (16 bytes) || ciphertext, and the id of the key that sealed them. */
export interface SealedBytes {
  readonly keyId: string
  readonly data: Uint8Array
}

/** Sealed bytes that no configured key opens: the key is not configured, or they were altered or sealed for another context. */
export class SealedUnreadable extends Schema.TaggedError<SealedUnreadable>()("SealedUnreadable", {
  message: Schema.String
}) {}

/** AES-256-GCM with a fresh random iv: iv || tag || ciphertext. */
const encrypt = (key: Buffer, plaintext: Uint8Array, aad: string | undefined): Buffer => {
  const iv = randomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", key, iv)
  if (aad !== undefined) cipher.setAAD(Buffer.from(aad, "utf8"))
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()])
  return Buffer.concat([iv, cipher.getAuthTag(), body])
}

/** The plaintext of iv || tag || ciphertext; none when it fails authentication. */
const decrypt = (key: Buffer, raw: Uint8Array, aad: string | undefined): Effect.Effect<Option.Option<Buffer>> =>
  Effect.option(Effect.try(() => {
    const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)
    const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, 12))
    decipher.setAuthTag(bytes.subarray(12, 28))
    if (aad !== undefined) decipher.setAAD(Buffer.from(aad, "utf8"))
    return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()])
  }))

export class SecretBox extends Context.Service<SecretBox, {
  readonly currentKeyId: string
  readonly seal: (plaintext: Redacted.Redacted) => Effect.Effect<Sealed>
  /** Decrypts at the moment of use; a missing key or a tampered ciphertext is a defect. */
  readonly open: (sealed: Sealed) => Effect.Effect<Redacted.Redacted>
  /** Seals bytes under the current key, bound to `context` (it must be given again to open them). */
  readonly sealBytes: (plaintext: Uint8Array, context: string) => Effect.Effect<SealedBytes>
  /** Opens bytes sealed under any configured key for `context`. */
  readonly openBytes: (sealed: SealedBytes, context: string) => Effect.Effect<Uint8Array, SealedUnreadable>
  /** The signature of `message` for `purpose` (base64url, 43 characters). */
  readonly sign: (purpose: string, message: string) => string
  /** Whether `signature` is the signature of `message` for `purpose` under a configured key (constant time). */
  readonly verify: (purpose: string, message: string, signature: string) => boolean
}>()("svc/SecretBox") {
  static readonly make = (current: MasterKey, previous: ReadonlyArray<MasterKey>) => {
    const keys = new Map([current, ...previous].map((k) => [k.id, k.key]))
    const mac = (key: Buffer, purpose: string, message: string) =>
      createHmac("sha256", createHmac("sha256", key).update(`svc-sign:${purpose}`).digest()).update(message).digest()
    return SecretBox.of({
      sign: (purpose, message) => mac(current.key, purpose, message).toString("base64url"),
      verify: (purpose, message, signature) => {
        const given = Buffer.from(signature, "base64url")
        return given.length === 32 && given.toString("base64url") === signature &&
          [...keys.values()].some((key) => timingSafeEqual(mac(key, purpose, message), given))
      },
      currentKeyId: current.id,
      seal: (plaintext) =>
        Effect.sync(() => ({
          ciphertext: encrypt(current.key, Buffer.from(Redacted.value(plaintext), "utf8"), undefined).toString(
            "base64"
          ),
          keyId: current.id
        })),
      open: (sealed) =>
        Effect.suspend(() => {
          const key = keys.get(sealed.keyId)
          if (key === undefined) {
            return Effect.die(
              new Error(`no configured master key has id ${sealed.keyId} (set SVC_MASTER_KEY_PREVIOUS)`)
            )
          }
          return Effect.flatMap(
            decrypt(key, Buffer.from(sealed.ciphertext, "base64"), undefined),
            Option.match({
              onNone: () => Effect.die(new Error(`a ciphertext sealed with key ${sealed.keyId} failed authentication`)),
              onSome: (opened) => Effect.succeed(Redacted.make(opened.toString("utf8")))
            })
          )
        }),
      sealBytes: (plaintext, context) =>
        Effect.sync(() => ({ keyId: current.id, data: encrypt(current.key, plaintext, context) })),
      openBytes: (sealed, context) =>
        Effect.suspend(() => {
          const key = keys.get(sealed.keyId)
          if (key === undefined) {
            return Effect.fail(
              new SealedUnreadable({
                message:
                  `it was sealed with master key ${sealed.keyId}, which is not configured (SVC_MASTER_KEY_PREVIOUS)`
              })
            )
          }
          return Effect.flatMap(
            decrypt(key, sealed.data, context),
            Option.match({
              onNone: () =>
                Effect.fail(
                  new SealedUnreadable({
                    message:
                      `it failed authentication under master key ${sealed.keyId} (altered, or sealed for another owner)`
                  })
                ),
              onSome: (opened) => Effect.succeed(new Uint8Array(opened.buffer, opened.byteOffset, opened.byteLength))
            })
          )
        })
    })
  }

  static readonly layerKeys = (current: MasterKey, previous: ReadonlyArray<MasterKey>) =>
    Layer.succeed(SecretBox)(SecretBox.make(current, previous))
}
