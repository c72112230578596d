/**
 * `send` starts a run with a message (on a thread, or on a new thread of
 * `--agent`) and follows it live until its turn ends (its end, or a park).
 * A message to a thread whose run waits on a person may answer it (409
 * `thread_busy` with `resolved_interaction_id`): then `send` says which
 * interaction it resolved and follows the resumed run from where it parked
 * to its turn's end. A message held as a follow-up (`queued`) is said with
 * the command that follows the run that will read it.
 */
import { checked, type Failure, ids, normalized, RunEvents, ServiceError } from "agent-service/client"
import { Effect, Option, Schema, Stream } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { isStreamEnd } from "../../domain/Chunk.ts"
import { RunId } from "../../domain/Ids.ts"
import { MessageInput } from "../../domain/Run.ts"
import { Usage } from "./CommandFailure.ts"
import { client } from "./Connection.ts"
import { field, json } from "./Flags.ts"
import { Invocation } from "./Invocation.ts"
import { Output } from "./Output.ts"
import { type Api } from "./ResourceCommands.ts"
import { runView } from "./RunView.ts"

const messageInput = checked(MessageInput, "message")

const BusyDetails = Schema.Struct({
  active_run_id: RunId,
  resolved_interaction_id: Schema.optionalKey(Schema.String),
  queued: Schema.optionalKey(Schema.Boolean),
  followup_id: Schema.optionalKey(Schema.String)
})
const decodeBusy = Schema.decodeUnknownOption(BusyDetails)

/** The details of a `thread_busy` refusal. */
const busyDetails = (e: Failure) =>
  e instanceof ServiceError && e.code === "thread_busy" ? decodeBusy(e.details) : Option.none()

/**
 * The events of a run after the park on `interactionId` ended: the replay up
 * to that park's end is skipped, and the stream stops at the next turn's end.
 */
const resumedAfter = <E, R>(events: Stream.Stream<RunEvents.RunEvent, E, R>, interactionId: string) =>
  Stream.suspend(() => {
    let parked = false
    let resumed = false
    return events.pipe(
      Stream.filter(({ chunk }) => {
        if (resumed) return true
        if (chunk.type === "data-svc-input-requested" && chunk.data.interactionId === interactionId) parked = true
        else if (parked && isStreamEnd(chunk)) resumed = true
        return false
      }),
      Stream.takeUntil(({ chunk }) => isStreamEnd(chunk))
    )
  })

/** The message was taken by the busy thread: as an answer (follow the run on), or held as a follow-up. */
const taken = (api: Api, details: typeof BusyDetails.Type, asJson: boolean, failure: Failure) =>
  Effect.gen(function*() {
    const out = yield* Output
    const view = yield* runView
    const runId = details.active_run_id
    if (details.resolved_interaction_id !== undefined) {
      const interactionId = yield* ids.interaction(details.resolved_interaction_id)
      const interaction = yield* normalized(api.interactions.get({ params: { id: interactionId } }))
      yield* out.line(
        asJson
          ? JSON.stringify({ resolved: interaction })
          : `[resolved] ${interaction.id}${interaction.decision === null ? "" : `: ${interaction.decision}`}`
      )
      const events = RunEvents.follow(api, runId, { followParks: true })
      return yield* view.follow(api, runId, resumedAfter(events, interaction.id), asJson)
    }
    if (details.queued === true && details.followup_id !== undefined) {
      if (asJson) return yield* out.line(JSON.stringify({ queued: { followupId: details.followup_id, runId } }))
      yield* out.line(`[queued] ${details.followup_id}: held for ${runId}, read at its next turn`)
      return yield* out.line(`  follow:  ${(yield* Invocation).name} runs tail ${runId}`)
    }
    return yield* Effect.fail(failure)
  })

export const send = Command.make("send", {
  agent: Flag.String("agent").pipe(Flag.optional, Flag.withDescription("Start a new thread on this agent")),
  band: Flag.String("band").pipe(Flag.optional, Flag.withDescription("lite, core or frontier (default: the thread's)")),
  reasoning: Flag.Boolean("reasoning").pipe(
    Flag.withDefault(false),
    Flag.withDescription("Show the model's reasoning when its route streams it")
  ),
  json,
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
            yield* out.line(flags.json ? JSON.stringify({ thread }) : `[thread] ${thread.id}`)
            return thread.id
          })
    })
    const input = yield* messageInput({
      input: second ?? first,
      ...field("band", flags.band),
      ...(flags.reasoning ? { streamReasoning: true } : {})
    })
    yield* out.progress("sending")
    return yield* RunEvents.send(api, threadId, input).pipe(
      Effect.matchEffect({
        onSuccess: ({ events, runId }) => view.follow(api, runId, events, flags.json),
        onFailure: (failure) =>
          Option.match(busyDetails(failure), {
            onNone: () => Effect.fail(failure),
            onSome: (details) => taken(api, details, flags.json, failure)
          })
      })
    )
  })).pipe(
    Command.withDescription(
      "Send a message and follow the run live: send <thread-id> <message> | send --agent <agent-id> <message>"
    )
  )
