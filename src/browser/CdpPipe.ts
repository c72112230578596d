/**
 * The DevTools protocol over the managed browser's pipe: Chromium started with
 * `--remote-debugging-pipe` reads commands on its fd 3 and writes answers and
 * events on its fd 4, each a JSON message ended by a NUL byte. Inside the
 * sandbox those fds are the channel's (Sandbox.startPiped), so no socket of
 * any kind serves the browser's DevTools: nothing in the workspace (a shell
 * command, a page) and nothing on the host can reach it but the service.
 * Playwright connects through this transport (`connectOverCDP(transport)`).
 */
import { Option, Schema } from "effect"
import type { Readable, Writable } from "node:stream"
import type { ConnectOverCDPTransport } from "playwright-core"

const decodeMessage = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Record(Schema.String, Schema.Unknown)))

export const transport = (input: Writable, output: Readable): ConnectOverCDPTransport => {
  let pending: Array<Buffer> = []
  let closed = false
  const self: ConnectOverCDPTransport = {
    send: (message) => {
      if (!closed) input.write(`${JSON.stringify(message)}\0`)
    },
    close: () => {
      if (closed) return
      closed = true
      input.end()
    }
  }
  output.on("data", (chunk: Buffer) => {
    let start = 0
    let end = chunk.indexOf(0)
    while (end !== -1) {
      const text = Buffer.concat([...pending, chunk.subarray(start, end)]).toString("utf8")
      pending = []
      // A message the browser garbled is dropped; its caller's command times out.
      Option.map(decodeMessage(text), (message) => self.onmessage?.(message))
      start = end + 1
      end = chunk.indexOf(0, start)
    }
    if (start < chunk.length) pending.push(chunk.subarray(start))
  })
  output.on("close", () => {
    closed = true
    self.onclose?.("the browser ended")
  })
  output.on("error", () => undefined)
  return self
}
