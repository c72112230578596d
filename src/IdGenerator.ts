/**
 * The one place ids are minted: a spec prefix plus 128 random bits from the
 * OS CSPRNG in base62 (unguessable), branded for the kinds that have a brand.
 * Secret tokens (API keys) use the same encoding with 256 bits.
 */
import { Context, Effect, Layer, Redacted } from "effect"
import { createHash, randomBytes, randomFillSync } from "node:crypto"
import {
  AgentId,
  ApiKeyId,
  ArtifactId,
  CodehostConnectionId,
  EnvironmentId,
  FileId,
  FollowupId,
  HookId,
  HttpConnectionId,
  type IdKind,
  type IdOf,
  IdPrefix,
  InteractionId,
  ResultHandlerId,
  RunId,
  SecretContextId,
  SecretId,
  ThreadId,
  ToolCallId,
  ToolServerId,
  WorkerId
} from "../domain/Ids.ts"

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/**
 * Fixed width: 16 bytes always give 22 characters, 32 bytes 43. The bytes are one big-endian number,
 * divided by 62 in 16-bit limbs (each partial remainder stays far below 2^53), the same digits a
 * BigInt conversion gives at a fraction of its cost (ids are minted on every step).
 */
export const base62 = (bytes: Uint8Array, width: number): string => {
  const limbs: Array<number> = []
  for (let i = bytes.length % 2 === 1 ? -1 : 0; i < bytes.length; i += 2) {
    limbs.push(((i < 0 ? 0 : bytes[i]!) << 8) | bytes[i + 1]!)
  }
  const digits: Array<string> = []
  let start = 0
  while (start < limbs.length) {
    let remainder = 0
    for (let i = start; i < limbs.length; i++) {
      const value = remainder * 65536 + limbs[i]!
      limbs[i] = Math.floor(value / 62)
      remainder = value % 62
    }
    digits.push(alphabet[remainder]!)
    while (start < limbs.length && limbs[start] === 0) start++
  }
  return digits.reverse().join("").padStart(width, "0")
}

/**
 * Random bytes drawn from the OS CSPRNG a pool at a time (one call per 256 ids, not one per id);
 * every id gets bytes of its own, never reused. Secret tokens take fresh bytes of their own.
 */
const pool = Buffer.alloc(4096)
let poolOffset = pool.length
const random = (size: number): Uint8Array => {
  if (poolOffset + size > pool.length) {
    randomFillSync(pool)
    poolOffset = 0
  }
  const bytes = pool.subarray(poolOffset, poolOffset + size)
  poolOffset += size
  return bytes
}

const unbranded = (raw: string): string => raw

/** How a freshly encoded id gets its kind's type: the brand's constructor, or none. */
const typed: { readonly [K in IdKind]: (raw: string) => IdOf<K> } = {
  agent: (raw) => AgentId.make(raw),
  thread: (raw) => ThreadId.make(raw),
  run: (raw) => RunId.make(raw),
  interaction: (raw) => InteractionId.make(raw),
  toolCall: (raw) => ToolCallId.make(raw),
  followup: (raw) => FollowupId.make(raw),
  toolServer: (raw) => ToolServerId.make(raw),
  httpConnection: (raw) => HttpConnectionId.make(raw),
  hook: (raw) => HookId.make(raw),
  file: (raw) => FileId.make(raw),
  artifact: (raw) => ArtifactId.make(raw),
  secret: (raw) => SecretId.make(raw),
  secretContext: (raw) => SecretContextId.make(raw),
  resultHandler: (raw) => ResultHandlerId.make(raw),
  codehostConnection: (raw) => CodehostConnectionId.make(raw),
  worker: (raw) => WorkerId.make(raw),
  apiKey: (raw) => ApiKeyId.make(raw),
  environment: (raw) => EnvironmentId.make(raw),
  environmentCall: unbranded,
  browserProfile: unbranded,
  textPart: unbranded,
  reasoningPart: unbranded,
  request: unbranded,
  organization: unbranded,
  incident: unbranded,
  node: unbranded
}

export class IdGenerator extends Context.Service<IdGenerator, {
  /** A new id of `kind`, of its branded type when it has one (`run` gives a RunId). */
  readonly make: <K extends IdKind>(kind: K) => Effect.Effect<IdOf<K>>
  /** A new secret token (API keys): `prefix` plus 256 random bits in base62. */
  readonly secretToken: (prefix: string) => Effect.Effect<Redacted.Redacted>
  /**
   * The id of `kind` that `seed` always gives (128 bits of its SHA-256): for ids that a replay
   * of the same work must mint again, such as the tool calls of a step replayed after a crash.
   */
  readonly derive: <K extends IdKind>(kind: K, seed: string) => IdOf<K>
}>()("svc/IdGenerator") {
  // Plain Effect.sync rather than Effect.fn: ids are minted on the hot path (every step), a span each would be noise.
  static readonly layer = Layer.succeed(IdGenerator)({
    make: <K extends IdKind>(kind: K) => Effect.sync(() => typed[kind](IdPrefix[kind] + base62(random(16), 22))),
    secretToken: (prefix: string) => Effect.sync(() => Redacted.make(prefix + base62(randomBytes(32), 43))),
    derive: <K extends IdKind>(kind: K, seed: string) =>
      typed[kind](IdPrefix[kind] + base62(createHash("sha256").update(seed).digest().subarray(0, 16), 22))
  })
}
