/**
 * What files and artifacts check alike before their bytes are stored: that a
 * store is configured, the size, the name and the media type; the digest they
 * are stored with; and how a failing store reaches a client (503, the cause
 * logged, never shown).
 */
import { Effect, Option } from "effect"
import { createHash } from "node:crypto"
import { InvalidRequest, NotFound, PayloadTooLarge, Unavailable } from "../../domain/Errors.ts"
import type { ArtifactConfig } from "./ArtifactConfig.ts"
import type { BlobStoreFailed, BlobStoreShape } from "./BlobStore.ts"

export const maxFilenameLength = 255

/** 400 `artifact_storage_unconfigured` when SVC_ARTIFACT_STORE=none. */
export const requireStore = (config: ArtifactConfig): Effect.Effect<void, InvalidRequest> =>
  config.store.kind === "none"
    ? Effect.fail(InvalidRequest.of(
      "No artifact store is configured on this deployment (SVC_ARTIFACT_STORE=none): files and artifacts cannot be stored or read.",
      undefined,
      "artifact_storage_unconfigured"
    ))
    : Effect.void

/** 413 `code` naming `field` when `bytes` is over SVC_FILE_MAX_BYTES. */
export const checkSize = (
  config: ArtifactConfig,
  bytes: number,
  field: string,
  code: string
): Effect.Effect<void, PayloadTooLarge> =>
  bytes > config.fileMaxBytes
    ? Effect.fail(
      new PayloadTooLarge({
        code,
        message:
          `${field} is ${bytes} bytes; this deployment stores at most ${config.fileMaxBytes} (SVC_FILE_MAX_BYTES).`,
        details: { field }
      })
    )
    : Effect.void

// C0 controls, DEL and the C1 range: never part of a name shown in a header or a listing.
const control = /[\u0000-\u001f\u007f-\u009f]/

/**
 * A file's name as stored: its last path segment (`C:\dir\a.png` and
 * `dir/a.png` are `a.png`), 1 to 255 characters, no control characters.
 */
export const checkFilename = (raw: string, field: string): Effect.Effect<string, InvalidRequest> => {
  const name = raw.slice(Math.max(raw.lastIndexOf("/"), raw.lastIndexOf("\\")) + 1).trim()
  if (name === "" || name === "." || name === "..") {
    return Effect.fail(
      InvalidRequest.forField(field, `${field} needs a file name (the filename of its Content-Disposition).`)
    )
  }
  if (name.length > maxFilenameLength) {
    return Effect.fail(
      InvalidRequest.forField(
        field,
        `${field}'s name is ${name.length} characters; at most ${maxFilenameLength} are allowed.`
      )
    )
  }
  if (control.test(name)) {
    return Effect.fail(InvalidRequest.forField(field, `${field}'s name contains a control character.`))
  }
  return Effect.succeed(name)
}

const mediaTypeShape = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/

/** A media type as stored: `type/subtype`, lowercase, without parameters. */
export const checkMediaType = (raw: string, field: string): Effect.Effect<string, InvalidRequest> => {
  const mediaType = raw.trim().toLowerCase()
  return mediaTypeShape.test(mediaType)
    ? Effect.succeed(mediaType)
    : Effect.fail(
      InvalidRequest.forField(field, `${field} must be a media type such as image/png (type/subtype, no parameters).`)
    )
}

export const sha256Hex = (data: Uint8Array): string => createHash("sha256").update(data).digest("hex")

/** A failing store is 503 `service_unavailable` (retry later); the cause goes to the log only. */
export const storeUnavailable = (e: BlobStoreFailed): Effect.Effect<never, Unavailable> =>
  Effect.logError(`artifact store: ${e.operation} of '${e.key}' failed`, e.cause).pipe(
    Effect.andThen(Effect.fail(
      new Unavailable({
        code: "service_unavailable",
        message: "The artifact store could not be reached; retry later."
      })
    ))
  )

/** The bytes under `key` of the `resource` `id`: 404 `<resource>_not_found` when the store no longer has them. */
export const bytesAt = (blobs: BlobStoreShape, key: string, resource: "file" | "artifact", id: string) =>
  blobs.get(key).pipe(
    Effect.catch(storeUnavailable),
    Effect.flatMap(Option.match({
      onNone: () =>
        Effect.fail(
          new NotFound({
            code: `${resource}_not_found`,
            message: `The bytes of ${resource} '${id}' are no longer stored.`
          })
        ),
      onSome: Effect.succeed
    }))
  )

/** Deletes `key`; when the store refuses, logs it and answers false instead of failing. */
export const deleteQuietly = (blobs: BlobStoreShape, key: string): Effect.Effect<boolean> =>
  blobs.delete(key).pipe(
    Effect.as(true),
    Effect.catch((e) => Effect.as(Effect.logWarning(`artifact store: could not delete '${e.key}'`, e.cause), false))
  )
