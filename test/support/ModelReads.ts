/**
 * What the model read of a run's tool results: the tool messages of the run's
 * checkpointed steps (run_steps), which are the conversation its next step
 * sends to whatever model the band routes to. Read through the test's own SQL
 * client (`TestServer.layerWithSql`). The scripted model's `Result:` answer
 * quotes a result without its untrusted-data envelope, so a test proves the
 * fencing here, on the model's input.
 */
import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { Message } from "../../domain/Conversation.ts"

const decodeSteps = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ messages: Schema.Array(Message) })))

/** The content of each tool message of `runId`'s checkpointed steps, in order (for a parked run, those settled so far). */
export const toolReadsOf = (runId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const steps = yield* decodeSteps(yield* sql`SELECT messages FROM run_steps WHERE run_id = ${runId} ORDER BY step`)
    return steps.flatMap((s) => s.messages.flatMap((m) => (m.role === "tool" ? [m.content] : [])))
  }).pipe(Effect.orDie)

/** A tool result as an untrusted tool's result reaches the model (src/tools/ToolResults.ts `envelope`), spelled out. */
export const fenced = (toolName: string, text: string): string =>
  `<untrusted_data source="${toolName}">\n${text}\n</untrusted_data>`
