/**
 * The body of `POST /v1/files`: `multipart/form-data` with exactly one part,
 * `file`, a file part (a Content-Disposition filename). Read as a stream with
 * this route's own limits: the file at most SVC_FILE_MAX_BYTES (413
 * `file_too_large`, refused from Content-Length before reading when it says
 * so), the body that plus 128 KiB of multipart framing, at most 8 parts. Every
 * other part, a text field named `file`, a second file, no file at all or a
 * body that is not multipart is 400 naming the part. The file part's bytes go
 * to `receive` as they arrive (Files.receive streams them to the store).
 */
import { Effect, Stream } from "effect"
import { HttpServerRequest, Multipart } from "effect/http"
import { InvalidRequest, type PayloadTooLarge } from "../domain/Errors.ts"
import { fileTooLarge, type IncomingFile, uploadField } from "../src/artifacts/Files.ts"

/** Room for boundaries and part headers around the file. */
const framingBytes = 64 * 1024

/** The file part as sent (its name unquoted, its declared media type) and what `receive` made of it. */
export interface ReadUpload<A> {
  readonly filename: string
  readonly mediaType: string | null
  readonly received: A
}

const fromMultipart =
  (maxFileBytes: number) => (e: Multipart.MultipartError): Effect.Effect<never, InvalidRequest | PayloadTooLarge> => {
    switch (e.reason._tag) {
      case "FileTooLarge":
      case "BodyTooLarge":
        return Effect.fail(fileTooLarge(maxFileBytes))
      case "TooManyParts":
        return Effect.fail(InvalidRequest.forField("body", "The body has too many parts: send one part, file."))
      case "FieldTooLarge":
        return Effect.fail(
          InvalidRequest.forField("body", "A text part of the body is too large: send one part, file.")
        )
      case "Parse":
        return Effect.fail(InvalidRequest.forField(
          "body",
          "The body is not valid multipart/form-data (a boundary in the Content-Type and well-formed parts are needed)."
        ))
      case "InternalError":
        return Effect.die(e)
    }
  }

/**
 * The parser keeps a quoted filename's quoted-pairs (`\"`, `\\`, as curl
 * writes a name with quotes or backslashes) as they are: they are undone here.
 */
const unquote = (filename: string): string => filename.replace(/\\(["\\])/g, "$1")

/** The parser's failures as this route's refusals. */
const refused = <A>(stream: Stream.Stream<A, Multipart.MultipartError>, maxFileBytes: number) =>
  Stream.catchTag(stream, "MultipartError", (e) => Stream.fromEffect(fromMultipart(maxFileBytes)(e)))

type UploadRefusal = InvalidRequest | PayloadTooLarge

const onePart = <A, E, R>(
  maxFileBytes: number,
  receive: (incoming: IncomingFile<UploadRefusal>) => Effect.Effect<A, E, R>
) =>
(
  upload: ReadUpload<A> | undefined,
  part: Multipart.Part
): Effect.Effect<ReadUpload<A>, UploadRefusal | E, R> => {
  if (part.key !== uploadField) {
    return Effect.fail(
      InvalidRequest.forField(part.key, `Unknown part '${part.key}': this route takes one part, ${uploadField}.`)
    )
  }
  if (part._tag === "Field") {
    return Effect.fail(InvalidRequest.forField(
      uploadField,
      `${uploadField} must be a file part: give its Content-Disposition a filename (curl: -F ${uploadField}=@path).`
    ))
  }
  if (upload !== undefined) {
    return Effect.fail(InvalidRequest.forField(uploadField, `Send one ${uploadField} part, not several.`))
  }
  const filename = unquote(part.name)
  return Effect.map(
    receive({ filename, mediaType: part.contentType, content: refused(part.content, maxFileBytes) }),
    (received) => ({ filename, mediaType: part.contentType, received })
  )
}

/**
 * Reads the one file part, handing its bytes to `receive` as they arrive. A
 * refusal after `receive` stored them leaves their removal to `receive`'s
 * scope (Files.receive).
 */
export const readUpload = <A, E, R>(
  parts: Stream.Stream<Multipart.Part, Multipart.MultipartError>,
  maxFileBytes: number,
  receive: (incoming: IncomingFile<UploadRefusal>) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const declared = Number(request.headers["content-length"] ?? "0")
    if (declared > maxFileBytes + 2 * framingBytes) return yield* fileTooLarge(maxFileBytes)
    const limits = Multipart.limitsServices({
      maxParts: 8,
      maxFieldSize: framingBytes,
      // The parser counts a part's headers with its bytes: the exact size is checked as the file arrives (Files.receive).
      maxFileSize: maxFileBytes + framingBytes,
      maxTotalSize: maxFileBytes + 2 * framingBytes,
      // Every part with a filename is a file, JSON included (the default reads JSON parts as text fields).
      fieldMimeTypes: []
    })
    const upload = yield* refused(parts.pipe(Stream.provideContext(limits)), maxFileBytes).pipe(
      Stream.runFoldEffect((): ReadUpload<A> | undefined => undefined, onePart(maxFileBytes, receive))
    )
    if (upload === undefined) {
      return yield* InvalidRequest.forField(
        uploadField,
        `A part named '${uploadField}' is required: the file to upload.`
      )
    }
    return upload
  })
