/**
 * `runs list|get|cancel|tail`. `list` filters by agent, thread, status and
 * creation time; `tail` follows any run's stream until the run ends,
 * through approvals and questions, resuming after disconnects
 * (Last-Event-ID); a run that ends failed or cancelled exits 3 or 4.
 */
import { filters, ids, RunEvents } from "agent-service/client"
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { type Run, RunStatuses } from "../../domain/Run.ts"
import { client } from "./Connection.ts"
import { json, pageFlags, pageOf, printed, printPage } from "./Flags.ts"
import { idArgument, withApi } from "./ResourceCommands.ts"
import { runView } from "./RunView.ts"

/** `id  status  agent  thread  createdAt  (reason)`. */
const runLine = (run: Run) => {
  const reason = run.error?.message ?? run.terminalReason
  return [run.id, run.status, run.agentId, run.threadId, run.createdAt].join("  ") +
    (reason === null || reason === undefined ? "" : `  (${reason})`)
}

const list = Command.make("list", {
  agent: Flag.String("agent").pipe(Flag.optional, Flag.withDescription("Only this agent's runs")),
  thread: Flag.String("thread").pipe(Flag.optional, Flag.withDescription("Only this thread's runs")),
  status: Flag.Literals("status", RunStatuses).pipe(Flag.optional, Flag.withDescription("Only runs in this status")),
  since: Flag.String("since").pipe(
    Flag.optional,
    Flag.withDescription("Only runs created at or after this ISO time (2026-03-02T09:00:00Z)")
  ),
  ...pageFlags,
  json
}, (flags) =>
  Effect.gen(function*() {
    const page = yield* pageOf(flags)
    const agentId = yield* filters.agentId(Option.getOrUndefined(flags.agent))
    const threadId = yield* filters.threadId(Option.getOrUndefined(flags.thread))
    const status = yield* filters.runStatus(Option.getOrUndefined(flags.status))
    const since = Option.getOrUndefined(flags.since)
    const query = {
      ...page,
      ...(agentId === undefined ? {} : { agentId }),
      ...(threadId === undefined ? {} : { threadId }),
      ...(status === undefined ? {} : { status }),
      ...(since === undefined ? {} : { createdSince: since })
    }
    const answer = yield* withApi((api) => api.runs.list({ query }))
    const filterFlags = [
      ...Option.match(flags.agent, { onNone: () => [], onSome: (a) => [`--agent ${a}`] }),
      ...Option.match(flags.thread, { onNone: () => [], onSome: (t) => [`--thread ${t}`] }),
      ...Option.match(flags.status, { onNone: () => [], onSome: (s) => [`--status ${s}`] }),
      ...Option.match(flags.since, { onNone: () => [], onSome: (s) => [`--since ${s}`] })
    ]
    yield* printPage(flags.json, answer, {
      plural: "runs",
      command: ["runs list", ...filterFlags].join(" "),
      line: runLine
    })
  })).pipe(Command.withDescription("List runs, newest first: id  status  agent  thread  createdAt  (reason)"))

const get = Command.make("get", { id: idArgument("run"), json }, (flags) =>
  Effect.gen(function*() {
    const run = yield* withApi((api) => Effect.flatMap(ids.run(flags.id), (id) => api.runs.get({ params: { id } })))
    yield* printed(flags.json, run, runLine)
  })).pipe(Command.withDescription("Show a run"))

const cancel = Command.make("cancel", { id: idArgument("run"), json }, (flags) =>
  Effect.gen(function*() {
    const run = yield* withApi((api) =>
      Effect.flatMap(ids.run(flags.id), (id) => api.runs.cancel({ params: { id }, headers: {} }))
    )
    yield* printed(flags.json, run, runLine)
  })).pipe(Command.withDescription("Cancel a run (idempotent); prints the run"))

const tail = Command.make("tail", {
  id: idArgument("run"),
  after: Flag.Int("after").pipe(Flag.optional, Flag.withDescription("Start after this frame id (Last-Event-ID)")),
  json
}, (flags) =>
  Effect.gen(function*() {
    const api = yield* client
    const view = yield* runView
    const runId = yield* ids.run(flags.id)
    const events = RunEvents.follow(api, runId, { followParks: true, lastEventId: Option.getOrUndefined(flags.after) })
    yield* view.follow(api, runId, events, flags.json)
  })).pipe(Command.withDescription("Follow a run's stream until the run ends, resuming after disconnects"))

export const runs = Command.make("runs").pipe(
  Command.withDescription("Runs: list, get, cancel, tail"),
  Command.withSubcommands([list, get, cancel, tail])
)
