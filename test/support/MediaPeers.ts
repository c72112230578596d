/**
 * The media providers' peers for tests: aimock answers OpenAI's images,
 * speech and videos endpoints and ElevenLabs' music and sound generation; a
 * pass-through proxy in front of it keeps every request as sent (method,
 * path, content type, raw body: aimock's own journal keeps only what it
 * matched on, and no request it has no route for, such as a video job's
 * DELETE), and lets a test wait for one to arrive. A file server stands in for
 * where a provider's answer points (a finished video's URL).
 */
import { Effect, type Scope } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { bodyBytes, listen } from "./HttpPeer.ts"

export interface RawRequest {
  readonly method: string
  readonly path: string
  readonly contentType: string
  readonly body: Buffer
}

export interface RawRecorder {
  /** `http://127.0.0.1:<port>`; paths are forwarded unchanged to the target. */
  readonly url: string
  readonly requests: () => ReadonlyArray<RawRequest>
  /** Completes once a request matching `where` has arrived (at once if one has), with it. */
  readonly awaitRequest: (where: (r: RawRequest) => boolean) => Effect.Effect<RawRequest>
}

export const rawRecorder = (target: string): Effect.Effect<RawRecorder, never, Scope.Scope> =>
  Effect.gen(function*() {
    const requests: Array<RawRequest> = []
    const waiters: Array<{ readonly where: (r: RawRequest) => boolean; readonly resolve: (r: RawRequest) => void }> = []
    const forward = async (req: IncomingMessage, res: ServerResponse) => {
      const body = await bodyBytes(req)
      const recorded: RawRequest = {
        method: req.method ?? "GET",
        path: req.url ?? "/",
        contentType: req.headers["content-type"] ?? "",
        body
      }
      requests.push(recorded)
      for (let i = waiters.length - 1; i >= 0; i--) {
        if (waiters[i].where(recorded)) waiters.splice(i, 1)[0].resolve(recorded)
      }
      const headers = new Headers()
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === "string" && name !== "host" && name !== "content-length") headers.set(name, value)
      }
      const upstream = await fetch(`${target}${req.url ?? "/"}`, {
        method: req.method ?? "GET",
        headers,
        body: req.method === "GET" || req.method === "DELETE" ? null : body
      })
      const answer = Buffer.from(await upstream.arrayBuffer())
      res.writeHead(upstream.status, {
        "content-type": upstream.headers.get("content-type") ?? "application/octet-stream"
      })
      res.end(answer)
    }
    const port = yield* listen((req, res) => {
      forward(req, res).catch(() => res.destroy())
    })
    return {
      url: `http://127.0.0.1:${port}`,
      requests: () => [...requests],
      awaitRequest: (where) =>
        Effect.callback<RawRequest>((resume) => {
          const found = requests.find(where)
          if (found !== undefined) return resume(Effect.succeed(found))
          waiters.push({ where, resolve: (r) => resume(Effect.succeed(r)) })
        })
    }
  })

/** Serves `files` (path -> bytes and type) and records each path asked for. */
export const fileServer = (
  files: Readonly<Record<string, { readonly bytes: Uint8Array; readonly type: string }>>
): Effect.Effect<{ readonly url: string; readonly served: () => ReadonlyArray<string> }, never, Scope.Scope> =>
  Effect.gen(function*() {
    const served: Array<string> = []
    const port = yield* listen((req, res) => {
      const path = req.url ?? "/"
      served.push(path)
      const file = files[path]
      if (file === undefined) return res.writeHead(404).end()
      res.writeHead(200, { "content-type": file.type })
      res.end(Buffer.from(file.bytes))
    })
    return { url: `http://127.0.0.1:${port}`, served: () => [...served] }
  })
