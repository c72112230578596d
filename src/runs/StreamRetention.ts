/**
 * Retention of run streams: the recovery pass deletes the stored chunks of a
 * run SVC_EVENT_RETENTION_DAYS after it ended (the run itself stays). Such a
 * stream can no longer be replayed byte for byte, so replaying it answers a
 * short stream of its own, without any of the run's content, that ends with
 * terminalReason `stream_replay_unavailable` and the run's usage receipt (like
 * every stream: the usage is not content, and the run keeps it).
 */
import { Stream } from "effect"
import type { Chunk, SequencedChunk } from "../../domain/Chunk.ts"
import type { RunId } from "../../domain/Ids.ts"
import { isTerminal, type Run, type UsageTotal } from "../../domain/Run.ts"

export const retentionMs = (days: number): number => days * 24 * 60 * 60 * 1000

/** The run ended longer ago than the retention: its stream is (or is about to be) deleted. */
export const pastRetention = (run: Run, now: number, retentionDays: number): boolean =>
  isTerminal(run.status) && run.completedAt !== null && Date.parse(run.completedAt) < now - retentionMs(retentionDays)

/**
 * The stream of a run past retention. Frame ids go on after the client's
 * `Last-Event-ID` (from 1 without one), so a resuming client sees them increase.
 */
export const unavailableStream = (
  runId: RunId,
  afterSeq: number,
  usage: UsageTotal
): Stream.Stream<SequencedChunk> => {
  const chunks: ReadonlyArray<Chunk> = [
    { type: "start", messageId: runId },
    {
      type: "error",
      errorText: "This run ended longer ago than the event log's retention; its stream can no longer be replayed."
    },
    { type: "data-svc-terminal", data: { terminalReason: "stream_replay_unavailable" } },
    { type: "data-svc-usage", data: usage },
    { type: "finish", finishReason: "error" }
  ]
  return Stream.fromIterable(chunks.map((chunk, i) => ({ seq: afterSeq + i + 1, chunk })))
}
