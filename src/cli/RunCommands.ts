/**
 * `send` starts a run with a message (on a thread, or on a new thread of
 * `--agent`) and follows it live until its turn ends; `runs tail` follows
 * any run's stream until the run ends, through approvals and questions.
 * Both resume the stream after a disconnect (Last-Event-ID).
 */
import { checked, ids, normalized, RunEvents } from "agent-service/client"
import { Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { MessageInput } from "../../domain/Run.ts"
import { Usage } from "./CommandFailure.ts"
import { client } from "./Connection.ts"
import { Output } from "./Output.ts"
import { runView } from "./RunView.ts"

const messageInput = checked(MessageInput, "message")

export const send = Command.make("send", {
  agent: Flag.String("agent").pipe(Flag.optional, Flag.withDescription("Start a new thread on this agent")),
  band: Flag.String("band").pipe(Flag.optional, Flag.withDescription("lite, core or frontier (default: the thread's)")),
  reasoning: Flag.Boolean("reasoning").pipe(
    Flag.withDefault(false),
    Flag.withDescription("Show the model's reasoning when its route streams it")
  ),
  args: Argument.String("message").pipe(
    Argument.variadic({ min: 1, max: 2 }),
    Argument.withDescription("<thread-id> <message>, or with --agent only <message>")
  )
}, (flags) =>
  Effect.gen(function*() {
    const api = yield* client
    const out = yield* Output
    const view = yield* runView
    const [first, second] = flags.args
    const threadId = yield* Option.match(flags.agent, {
      onNone: () =>
        second === undefined
          ? Effect.fail(new Usage({ message: "give a thread id and a message, or --agent <agent id> and a message" }))
          : ids.thread(first),
      onSome: (agent) =>
        second !== undefined
          ? Effect.fail(new Usage({ message: "with --agent, give only the message" }))
          : Effect.gen(function*() {
            const agentId = yield* ids.agent(agent)
            yield* out.progress("creating a thread")
            const thread = yield* normalized(api.threads.create({ payload: { agentId }, headers: {} }))
            yield* out.line(`[thread] ${thread.id}`)
            return thread.id
          })
    })
    const input = yield* messageInput({
      input: second ?? first,
      ...Option.match(flags.band, { onNone: () => ({}), onSome: (band) => ({ band }) }),
      ...(flags.reasoning ? { streamReasoning: true } : {})
    })
    yield* out.progress("sending")
    const { runId, events } = yield* RunEvents.send(api, threadId, input)
    yield* view.follow(api, runId, events)
  })).pipe(
    Command.withDescription(
      "Send a message and follow the run live: send <thread-id> <message> | send --agent <agent-id> <message>"
    )
  )

const tail = Command.make("tail", {
  runId: Argument.String("run-id"),
  after: Flag.Int("after").pipe(Flag.optional, Flag.withDescription("Start after this frame id (Last-Event-ID)"))
}, (flags) =>
  Effect.gen(function*() {
    const api = yield* client
    const view = yield* runView
    const runId = yield* ids.run(flags.runId)
    const events = RunEvents.follow(api, runId, { followParks: true, lastEventId: Option.getOrUndefined(flags.after) })
    yield* view.follow(api, runId, events)
  })).pipe(Command.withDescription("Follow a run's stream until the run ends, resuming after disconnects"))

export const runs = Command.make("runs").pipe(
  Command.withDescription("Follow runs"),
  Command.withSubcommands([tail])
)
