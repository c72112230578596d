/**
 * `threads list|get|create|delete|cancel|history`. `history` prints a
 * thread's conversation, oldest first, in the lines `send` and `runs tail`
 * print while a run streams (ThreadHistoryLines.ts), or the messages as JSON.
 */
import { allMessages, checked, ids } from "agent-service/client"
import { Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { type Thread, ThreadCreate } from "../../domain/Thread.ts"
import { bodyFlags, bodyOf, field, json, pageFlags, pageOf, printed, printPage } from "./Flags.ts"
import { Output } from "./Output.ts"
import { idArgument, withApi } from "./ResourceCommands.ts"
import { messageLines } from "./ThreadHistoryLines.ts"

const threadLine = (t: Thread) => [t.id, t.agentId, t.status, t.createdAt].join("  ")

const createBody = checked(ThreadCreate, "thread")

const list = Command.make("list", {
  agent: Flag.String("agent").pipe(Flag.withDescription("The agent whose threads to list")),
  ...pageFlags,
  json
}, (flags) =>
  Effect.gen(function*() {
    const query = yield* pageOf(flags)
    const page = yield* withApi((api) =>
      Effect.flatMap(ids.agent(flags.agent), (agentId) => api.threads.list({ query: { ...query, agentId } }))
    )
    yield* printPage(flags.json, page, {
      plural: "threads",
      command: `threads list --agent ${flags.agent}`,
      line: threadLine
    })
  })).pipe(Command.withDescription("List an agent's threads, newest first: id  agent  status  createdAt"))

const get = Command.make("get", { id: idArgument("thread"), json }, (flags) =>
  Effect.gen(function*() {
    const thread = yield* withApi((api) =>
      Effect.flatMap(ids.thread(flags.id), (id) => api.threads.get({ params: { id } }))
    )
    yield* printed(flags.json, thread, threadLine)
  })).pipe(Command.withDescription("Show a thread"))

const create = Command.make("create", {
  agent: Flag.String("agent").pipe(Flag.withDescription("The thread's agent")),
  metadata: Flag.KeyValuePair("metadata").pipe(Flag.optional, Flag.withDescription("key=value, repeatable")),
  ...bodyFlags,
  json
}, (flags) =>
  Effect.gen(function*() {
    const body = { ...(yield* bodyOf(flags)), agentId: flags.agent, ...field("metadata", flags.metadata) }
    const thread = yield* withApi((api) =>
      Effect.flatMap(createBody(body), (payload) => api.threads.create({ payload, headers: {} }))
    )
    yield* printed(flags.json, thread, (t) => t.id)
  })).pipe(Command.withDescription("Create a thread on --agent (more fields from --file / --data); prints its id"))

const remove = Command.make("delete", { id: idArgument("thread"), json }, (flags) =>
  Effect.gen(function*() {
    const deleted = yield* withApi((api) =>
      Effect.flatMap(ids.thread(flags.id), (id) => api.threads.delete({ params: { id } }))
    )
    yield* printed(flags.json, deleted, (d) => `${d.id} deleted`)
  })).pipe(Command.withDescription("Delete a thread (its runs are cancelled)"))

const cancel = Command.make("cancel", { id: idArgument("thread"), json }, (flags) =>
  Effect.gen(function*() {
    const cancelled = yield* withApi((api) =>
      Effect.flatMap(ids.thread(flags.id), (id) => api.runs.cancelThread({ params: { id }, headers: {} }))
    )
    yield* printed(
      flags.json,
      cancelled,
      (c) => `${c.id}: ${c.cancelledRunId === null ? "no active run" : `cancelled ${c.cancelledRunId}`}`
    )
  })).pipe(Command.withDescription("Cancel the thread's active run"))

const history = Command.make("history", { id: idArgument("thread"), json }, (flags) =>
  Effect.gen(function*() {
    const out = yield* Output
    const messages = yield* withApi((api) => allMessages(api, flags.id))
    if (flags.json) return yield* out.line(JSON.stringify(messages, null, 2))
    if (messages.length === 0) return yield* out.line("no messages")
    for (const message of messages) yield* Effect.forEach(messageLines(message), out.line)
  })).pipe(Command.withDescription("Print a thread's conversation, oldest first"))

export const threads = Command.make("threads").pipe(
  Command.withDescription("Threads: list, get, create, delete, cancel, history"),
  Command.withSubcommands([list, get, create, remove, cancel, history])
)
