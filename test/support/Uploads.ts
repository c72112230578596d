/**
 * Files through the API as a client sends and reads them: multipart uploads
 * built by the platform's own FormData (as `fetch` encodes them), raw bodies
 * for malformed ones, and downloads read as bytes with their headers.
 */
import { Effect } from "effect"
import { FileObject } from "../../domain/Artifact.ts"
import * as TestServer from "./TestServer.ts"

export interface Part {
  readonly name?: string
  readonly filename?: string
  readonly type?: string
  readonly data: Uint8Array | string
}

/** Every byte value, `repeat` times over: a file no text decoding survives. */
export const everyByte = (repeat = 1): Uint8Array => new Uint8Array(256 * repeat).map((_, i) => i % 256)

/** Whether `a` holds exactly the bytes of `b` (not when there is no `a`). */
export const sameBytes = (a: Uint8Array | undefined, b: Uint8Array): boolean =>
  a !== undefined && Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0

const bytesOf = (data: Uint8Array | string): Uint8Array<ArrayBuffer> =>
  typeof data === "string" ? new TextEncoder().encode(data) : new Uint8Array(data)

/** A FormData with `parts`: a file part when it has a filename, a text field otherwise. */
export const form = (parts: ReadonlyArray<Part>): FormData => {
  const body = new FormData()
  for (const part of parts) {
    const name = part.name ?? "file"
    if (part.filename === undefined) {
      body.append(name, typeof part.data === "string" ? part.data : new Blob([bytesOf(part.data)]))
    } else {body.append(
        name,
        new Blob([bytesOf(part.data)], part.type === undefined ? {} : { type: part.type }),
        part.filename
      )}
  }
  return body
}

export interface Download {
  readonly status: number
  readonly headers: Headers
  readonly bytes: Uint8Array
  /** The body as JSON when it is JSON (error envelopes). */
  readonly json: unknown
}

const send = (path: string, init: RequestInit & { readonly key?: string | null }) =>
  Effect.flatMap(TestServer.TestApi, (api) =>
    Effect.promise(async (): Promise<Download> => {
      const headers = new Headers(init.headers)
      const key = init.key === undefined ? TestServer.Keys.a : init.key
      if (key !== null) headers.set("authorization", `Bearer ${key}`)
      const url = path.startsWith("http") ? path : api.url + path
      const response = await fetch(url, { ...init, headers })
      const bytes = new Uint8Array(await response.arrayBuffer())
      return {
        status: response.status,
        headers: response.headers,
        bytes,
        json: TestServer.parseJson(new TextDecoder().decode(bytes))
      }
    }))

const asReply = (d: Download): TestServer.Reply => ({
  status: d.status,
  headers: d.headers,
  text: new TextDecoder().decode(d.bytes),
  json: d.json
})

/** `POST /v1/files` with `body` (a FormData, or raw bytes with their own Content-Type header) and any other `headers`. */
export const post = (
  body: FormData | string,
  options: {
    readonly key?: string | null
    readonly contentType?: string
    readonly headers?: Record<string, string>
  } = {}
) =>
  Effect.map(
    send("/v1/files", {
      method: "POST",
      body,
      ...(options.key === undefined ? {} : { key: options.key }),
      headers: {
        ...options.headers,
        ...(options.contentType === undefined ? {} : { "content-type": options.contentType })
      }
    }),
    asReply
  )

/** Uploads one file part and asserts 200 with a File. */
export const upload = (part: Omit<Part, "name">, key?: string) =>
  Effect.flatMap(
    post(form([{ filename: "file.bin", ...part }]), key === undefined ? {} : { key }),
    (reply) => TestServer.expectOk(reply, 200, FileObject)
  )

/** A GET read as bytes (key a unless told; `null`: no key); `path` may be an absolute URL. */
export const download = (path: string, key?: string | null) =>
  send(path, { method: "GET", ...(key === undefined ? {} : { key }) })

/** A download's envelope, as TestServer.expectError reads replies. */
export const replyOf = asReply
