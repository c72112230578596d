/**
 * The AI SDK UI message stream over SSE: `id: <seq>` and `data: <chunk json>`
 * per frame, `data: [DONE]` at the end, header `x-vercel-ai-ui-message-stream: v1`.
 * When the service stops (`ended` completes) the stream ends where it is,
 * without `[DONE]`: the client resumes it with Last-Event-ID on another node.
 */
import { type Effect, Stream } from "effect"
import { HttpServerResponse } from "effect/http"
import type { RunId } from "../domain/Ids.ts"
import type { SequencedChunk } from "../src/runs/EventLog.ts"

const encoder = new TextEncoder()

export const sseResponse = (runId: RunId, chunks: Stream.Stream<SequencedChunk>, ended: Effect.Effect<void>) =>
  HttpServerResponse.stream(
    chunks.pipe(
      // The chunks stored together are written together: one socket write per batch, not per chunk.
      Stream.chunks,
      Stream.map((batch) =>
        encoder.encode(batch.map((c) => `id: ${c.seq}\ndata: ${JSON.stringify(c.chunk)}\n\n`).join(""))
      ),
      Stream.concat(Stream.succeed(encoder.encode("data: [DONE]\n\n"))),
      Stream.interruptWhen(ended)
    ),
    {
      contentType: "text/event-stream",
      headers: {
        "cache-control": "no-cache",
        "x-vercel-ai-ui-message-stream": "v1",
        "x-accel-buffering": "no",
        "svc-run-id": runId
      }
    }
  )
