/**
 * The chunks this node's writers stored lately, kept in memory while the
 * writer is open, so that a follower on the same node (the usual case: the
 * client that started the run) never reads back what was just written. Only
 * stored chunks are kept; a follower whose cursor is older than what is kept
 * reads the table.
 */
import type { SequencedChunk } from "../../domain/Chunk.ts"

/** A long run keeps its last chunks only. */
const maxKept = 2000

interface Log {
  /** Every chunk after `base` is in `chunks` (contiguous). */
  base: number
  chunks: Array<SequencedChunk>
}

export class RecentChunks {
  private readonly logs = new Map<string, Log>()

  open(runId: string, lastStored: number): void {
    this.logs.set(runId, { base: lastStored, chunks: [] })
  }

  close(runId: string): void {
    this.logs.delete(runId)
  }

  /** Whether a writer of this node writes the run. */
  has(runId: string): boolean {
    return this.logs.has(runId)
  }

  append(runId: string, rows: ReadonlyArray<SequencedChunk>): void {
    const log = this.logs.get(runId)
    if (log === undefined) return
    log.chunks.push(...rows)
    if (log.chunks.length > maxKept) {
      const dropped = log.chunks.splice(0, log.chunks.length - maxKept)
      log.base = dropped[dropped.length - 1].seq
    }
  }

  /** The stored chunks after `cursor`, or undefined when memory cannot tell (not written here, or older than kept). */
  after(runId: string, cursor: number): ReadonlyArray<SequencedChunk> | undefined {
    const log = this.logs.get(runId)
    if (log === undefined || cursor < log.base) return undefined
    return log.chunks.filter((c) => c.seq > cursor)
  }
}
