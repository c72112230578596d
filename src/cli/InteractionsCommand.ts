/**
 * `interactions list` (pending by default), `get`, `approve` / `deny` an
 * approval request, and `answer` a question with `--text` or `--option`
 * (each a resolve, POST /v1/interactions/:id/resolve), with `--json`.
 */
import { checked, filters, ids, normalized } from "agent-service/client"
import { Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { type InputResponse, type Interaction, ResolveInteractionBody } from "../../domain/Interaction.ts"
import { Usage } from "./CommandFailure.ts"
import { client } from "./Connection.ts"
import { json, pageFlags, pageOf, printed, printPage } from "./Flags.ts"
import { Invocation } from "./Invocation.ts"
import { Output } from "./Output.ts"
import { idArgument, withApi } from "./ResourceCommands.ts"
import { brief, requestLines } from "./RunView.ts"

const resolveBody = checked(ResolveInteractionBody, "resolution")

const interactionLine = (i: Interaction) =>
  [i.id, i.status, i.kind, i.toolName, i.runId, i.kind === "question" ? i.request?.title ?? "" : brief(i.input)].join(
    "  "
  )

const list = Command.make("list", {
  run: Flag.String("run").pipe(Flag.optional, Flag.withDescription("Only this run's interactions")),
  all: Flag.Boolean("all").pipe(Flag.withDefault(false), Flag.withDescription("Resolved and cancelled ones too")),
  ...pageFlags,
  json
}, (flags) =>
  Effect.gen(function*() {
    const page = yield* pageOf(flags)
    const runId = yield* filters.runId(Option.getOrUndefined(flags.run))
    const query = {
      ...page,
      ...(runId === undefined ? {} : { runId }),
      ...(flags.all ? {} : { status: "pending" as const })
    }
    const answer = yield* withApi((api) => api.interactions.list({ query }))
    const command = [
      "interactions list",
      ...(flags.all ? ["--all"] : []),
      ...(runId === undefined ? [] : [`--run ${runId}`])
    ]
    yield* printPage(flags.json, answer, {
      plural: flags.all ? "interactions" : "pending interactions",
      command: command.join(" "),
      line: interactionLine
    })
  })).pipe(Command.withDescription("List pending interactions (approvals and questions)"))

const get = Command.make("get", { id: idArgument("interaction"), json }, (flags) =>
  Effect.gen(function*() {
    const interaction = yield* withApi((api) =>
      Effect.flatMap(ids.interaction(flags.id), (id) => api.interactions.get({ params: { id } }))
    )
    yield* printed(flags.json, interaction, interactionLine)
  })).pipe(Command.withDescription("Show an interaction"))

const resolve = (id: string, body: unknown, asJson: boolean) =>
  Effect.gen(function*() {
    const api = yield* client
    const interactionId = yield* ids.interaction(id)
    const payload = yield* resolveBody(body)
    const resolved = yield* normalized(
      api.interactions.resolve({ params: { id: interactionId }, payload, headers: {} })
    )
    yield* printed(asJson, resolved, (r) => `${r.id} ${r.status}${r.decision === null ? "" : `: ${r.decision}`}`)
  })

const reason = Flag.String("reason").pipe(Flag.optional, Flag.withDescription("Why (passed on to the model)"))
const withReason = (r: Option.Option<string>) =>
  Option.match(r, { onNone: () => ({}), onSome: (reason) => ({ reason }) })

const decide = (name: "approve" | "deny") =>
  Command.make(
    name,
    { id: Argument.String("interaction-id"), reason, json },
    (flags) =>
      resolve(
        flags.id,
        { inputResponses: [{ requestId: flags.id, optionId: name }], ...withReason(flags.reason) },
        flags.json
      )
  ).pipe(
    Command.withDescription(`${name === "approve" ? "Approve" : "Deny"} a pending tool call`)
  )

/** The question to answer: `--question`, or the only one the interaction asks. */
const questionId = (interaction: Interaction, given: Option.Option<string>) => {
  if (Option.isSome(given)) return Effect.succeed(given.value)
  const questions = interaction.request?.questions ?? []
  if (questions.length === 1) return Effect.succeed(questions[0].id)
  return Effect.fail(
    new Usage({ message: `${interaction.id} asks ${questions.length} questions: name one with --question <id>` })
  )
}

const answer = Command.make("answer", {
  id: Argument.String("interaction-id"),
  question: Flag.String("question").pipe(
    Flag.optional,
    Flag.withDescription("The question's id (default: the only one)")
  ),
  text: Flag.String("text").pipe(Flag.optional, Flag.withDescription("A free-form answer")),
  option: Flag.String("option").pipe(Flag.atLeast(0), Flag.withDescription("An option's id (repeat for several)")),
  reason,
  json
}, (flags) =>
  Effect.gen(function*() {
    const api = yield* client
    const out = yield* Output
    const interactionId = yield* ids.interaction(flags.id)
    const interaction = yield* normalized(api.interactions.get({ params: { id: interactionId } }))
    if (interaction.kind !== "question") {
      yield* Effect.forEach(
        requestLines((yield* Invocation).name, interaction.id, {
          kind: interaction.kind,
          toolName: interaction.toolName,
          input: interaction.input
        }),
        out.error
      )
      return yield* new Usage({ message: `${interaction.id} is an approval request: use approve or deny` })
    }
    const requestId = yield* questionId(interaction, flags.question)
    const options = flags.option
    if (Option.isNone(flags.text) && options.length === 0) {
      return yield* new Usage({ message: "give --text <answer> or --option <id>" })
    }
    const response: InputResponse = {
      requestId,
      ...Option.match(flags.text, { onNone: () => ({}), onSome: (text) => ({ text }) }),
      ...(options.length === 1 ? { optionId: options[0] } : options.length > 1 ? { optionIds: options } : {})
    }
    return yield* resolve(flags.id, { inputResponses: [response], ...withReason(flags.reason) }, flags.json)
  })).pipe(Command.withDescription("Answer a question with --text and/or --option"))

export const interactions = Command.make("interactions").pipe(
  Command.withDescription("Pending approvals and questions"),
  Command.withSubcommands([list, get, decide("approve"), decide("deny"), answer])
)
