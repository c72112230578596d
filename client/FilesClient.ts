/**
 * Files through the Promise client (`client.files`): upload as
 * `multipart/form-data` with the one part `file` the route takes, then list,
 * describe, read and delete. An upload is checked before anything is sent (a
 * filename, bytes); the size limit is the service's (413 `file_too_large`).
 */
import { Effect } from "effect"
import { ClientError } from "./Failures.ts"
import { ids, type PageOptions, pageQuery } from "./Inputs.ts"
import type { ApiClient } from "./ServiceClient.ts"

export interface UploadOptions {
  /** The file's name, as the part's Content-Disposition filename carries it. */
  readonly filename: string
  /** The part's Content-Type; the service sniffs the bytes when absent or `application/octet-stream`. */
  readonly mediaType?: string | undefined
}

type Bytes = Blob | Uint8Array<ArrayBuffer> | string

const uploadForm = (data: Bytes, options: UploadOptions): Effect.Effect<FormData, ClientError> => {
  if (options.filename.length === 0) {
    return Effect.fail(
      new ClientError({ kind: "invalid_request", message: "Invalid upload: filename must not be empty." })
    )
  }
  const blob = data instanceof Blob && options.mediaType === undefined
    ? data
    : new Blob([data], options.mediaType === undefined ? {} : { type: options.mediaType })
  const form = new FormData()
  form.append("file", blob, options.filename)
  return Effect.succeed(form)
}

export const filesClient = (api: ApiClient, run: <A>(effect: Effect.Effect<A, unknown>) => Promise<A>) => ({
  /** Stores one file to attach to runs (`input.attachments: [{ fileId }]`); answers the File. */
  upload: (data: Bytes, options: UploadOptions) =>
    run(Effect.flatMap(uploadForm(data, options), (payload) => api.files.upload({ payload, headers: {} }))),
  list: (page: PageOptions = {}) => run(Effect.flatMap(pageQuery(page), (query) => api.files.list({ query }))),
  get: (id: string) => run(Effect.flatMap(ids.file(id), (fileId) => api.files.get({ params: { id: fileId } }))),
  /** The file's bytes. */
  content: (id: string) => run(Effect.flatMap(ids.file(id), (fileId) => api.files.content({ params: { id: fileId } }))),
  delete: (id: string) => run(Effect.flatMap(ids.file(id), (fileId) => api.files.delete({ params: { id: fileId } })))
})

export type FilesClient = ReturnType<typeof filesClient>
