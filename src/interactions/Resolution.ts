/**
 * The resolution rules of spec 4.4, as pure functions: what a resolve body
 * means for an interaction (or why it is refused), and whether a repeat is
 * the same outcome (200) or a different one (409 idempotency_key_conflict).
 */
import { Data } from "effect"
import type { Interaction, ResolveInteractionBody } from "../../domain/Interaction.ts"
import { canonicalJson } from "../CanonicalJson.ts"
import type { Settlement } from "../store/InteractionRepo.ts"
import { decidedByReview } from "./HookReviews.ts"

export type Judged = Data.TaggedEnum<{
  Ok: { readonly settlement: Settlement }
  Invalid: { readonly message: string }
}>
export const Judged = Data.taggedEnum<Judged>()

const invalid = (message: string): Judged => Judged.Invalid({ message })

const resolution = (body: ResolveInteractionBody): Record<string, unknown> => ({
  inputResponses: body.inputResponses ?? [],
  ...(body.reason === undefined ? {} : { reason: body.reason })
})

export const judge = (interaction: Interaction, body: ResolveInteractionBody): Judged => {
  const reason = body.reason ?? null
  const responses = body.inputResponses ?? []
  if (body.cancel === true) {
    if (responses.length > 0) return invalid("Send either cancel: true or inputResponses, not both.")
    return Judged.Ok({
      settlement: {
        status: "cancelled",
        decision: interaction.kind === "approval_request" ? "cancel" : null,
        reason,
        resolution: null
      }
    })
  }
  const seen = new Set<string>()
  for (const r of responses) {
    if (seen.has(r.requestId)) return invalid(`requestId '${r.requestId}' appears more than once.`)
    seen.add(r.requestId)
  }
  if (interaction.kind === "approval_request") {
    if (responses.length !== 1) {
      return invalid(
        "An approval takes exactly one input response: { requestId: <interaction id>, optionId: 'approve' | 'deny' }."
      )
    }
    const [r] = responses
    if (r.requestId !== interaction.id) {
      return invalid(`For an approval, requestId is the interaction's own id ('${interaction.id}').`)
    }
    if (r.optionIds !== undefined || r.text !== undefined) {
      return invalid("An approval takes optionId 'approve' or 'deny' only.")
    }
    if (r.optionId !== "approve" && r.optionId !== "deny") {
      return invalid("An approval's optionId is 'approve' or 'deny'.")
    }
    return Judged.Ok({
      settlement: {
        status: "resolved",
        decision: r.optionId === "approve" ? "allow" : "deny",
        reason,
        resolution: resolution(body)
      }
    })
  }
  const request = interaction.request
  const questions = request?.questions ?? []
  const actions = request?.actions ?? []
  if (responses.length === 0) return invalid("Answer the questions (or choose an action), or send cancel: true.")
  let actionChosen = false
  for (const r of responses) {
    const action = actions.find((a) => a.id === r.requestId)
    if (action !== undefined) {
      if (r.optionId !== undefined || r.optionIds !== undefined || r.text !== undefined) {
        return invalid(`Action '${r.requestId}' takes no optionId, optionIds or text.`)
      }
      actionChosen = true
      continue
    }
    const question = questions.find((q) => q.id === r.requestId)
    if (question === undefined) {
      return invalid(
        `Unknown question '${r.requestId}': requestId must be a question or action id of this interaction.`
      )
    }
    const options = question.options ?? []
    const freeText = question.multiline || question.allowOther || options.length === 0
    if (r.optionIds !== undefined) {
      if (!question.multiple) return invalid(`Question '${question.id}' takes one option (optionId), not optionIds.`)
      if (r.optionId !== undefined) return invalid(`Question '${question.id}': send optionIds or optionId, not both.`)
    }
    const chosen = r.optionIds ?? (r.optionId === undefined ? [] : [r.optionId])
    for (const id of chosen) {
      if (!options.some((o) => o.id === id)) return invalid(`Question '${question.id}' has no option '${id}'.`)
    }
    if (r.text !== undefined && !freeText) return invalid(`Question '${question.id}' does not take free text.`)
    if (chosen.length === 0 && r.text === undefined) {
      return invalid(`Question '${question.id}' needs an answer: an option or text.`)
    }
  }
  if (!actionChosen) {
    const missing = questions.find((q) => !responses.some((r) => r.requestId === q.id))
    if (missing !== undefined) return invalid(`Question '${missing.id}' needs an answer.`)
  }
  return Judged.Ok({ settlement: { status: "resolved", decision: null, reason, resolution: resolution(body) } })
}

/**
 * A repeat of a settled interaction: the same outcome is fine, another one is a conflict. One a
 * hook's review decided (HookReviews.ts) has no answer of a person to compare: its decision is
 * its outcome (approve matches allow, deny matches deny, cancel: true a run failed by onHookError).
 */
export const sameOutcome = (interaction: Interaction, settlement: Settlement): boolean =>
  interaction.status === settlement.status &&
  interaction.decision === settlement.decision &&
  (decidedByReview(interaction) || canonicalJson(interaction.resolution) === canonicalJson(settlement.resolution))

/** Plain text that answers a lone pending approval (spec 4.2 resolved_interaction_id). */
export const approvalFromText = (text: string): "approve" | "deny" | undefined => {
  const t = text.trim().toLowerCase().replace(/[.!]+$/, "")
  if (/^(y|yes|yep|ok|okay|approve|approved|allow|go ahead|do it|sure)$/.test(t)) return "approve"
  if (/^(n|no|nope|deny|denied|reject|don't|do not|stop|cancel)$/.test(t)) return "deny"
  return undefined
}
