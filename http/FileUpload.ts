/**
 * The body of `POST /v1/files`: `multipart/form-data` with exactly one part,
 * `file`, a file part (a Content-Disposition filename). Read as a stream with
 * this route's own limits: the file at most SVC_FILE_MAX_BYTES (413
 * `file_too_large`, refused from Content-Length before reading when it says
 * so), the body that plus 128 KiB of multipart framing, at most 8 parts. Every
 * other part, a text field named `file`, a second file, no file at all or a
 * body that is not multipart is 400 naming the part.
 */
import { Effect, Stream } from "effect"
import { HttpServerRequest, Multipart } from "effect/http"
import { InvalidRequest, PayloadTooLarge } from "../domain/Errors.ts"
import { type Upload, uploadField } from "../src/artifacts/Files.ts"

/** Room for boundaries and part headers around the file. */
const framingBytes = 64 * 1024

const tooLarge = (maxFileBytes: number) =>
  new PayloadTooLarge({
    code: "file_too_large",
    message:
      `${uploadField} is larger than ${maxFileBytes} bytes, the most this deployment stores (SVC_FILE_MAX_BYTES).`,
    details: { field: uploadField }
  })

const fromMultipart =
  (maxFileBytes: number) => (e: Multipart.MultipartError): Effect.Effect<never, InvalidRequest | PayloadTooLarge> => {
    switch (e.reason._tag) {
      case "FileTooLarge":
      case "BodyTooLarge":
        return Effect.fail(tooLarge(maxFileBytes))
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

const onePart = (
  upload: Upload | undefined,
  part: Multipart.Part
): Effect.Effect<Upload, InvalidRequest | Multipart.MultipartError> => {
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
  return Effect.map(part.contentEffect, (data) => ({ filename: unquote(part.name), mediaType: part.contentType, data }))
}

export const readUpload = (parts: Stream.Stream<Multipart.Part, Multipart.MultipartError>, maxFileBytes: number) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const declared = Number(request.headers["content-length"] ?? "0")
    if (declared > maxFileBytes + 2 * framingBytes) return yield* tooLarge(maxFileBytes)
    const limits = Multipart.limitsServices({
      maxParts: 8,
      maxFieldSize: framingBytes,
      // The parser counts a part's headers with its bytes: the exact size is checked once the file is read (Files.upload).
      maxFileSize: maxFileBytes + framingBytes,
      maxTotalSize: maxFileBytes + 2 * framingBytes,
      // Every part with a filename is a file, JSON included (the default reads JSON parts as text fields).
      fieldMimeTypes: []
    })
    const upload = yield* parts.pipe(
      Stream.provideContext(limits),
      Stream.runFoldEffect((): Upload | undefined => undefined, onePart),
      Effect.catchTag("MultipartError", fromMultipart(maxFileBytes))
    )
    if (upload === undefined) {
      return yield* InvalidRequest.forField(
        uploadField,
        `A part named '${uploadField}' is required: the file to upload.`
      )
    }
    return upload
  })
