/**
 * A tool server's or HTTP connection's credential never comes back through
 * the service: an upstream may echo what it was sent (in a result, an error
 * result, a 401 body, a URL quoted in an error). Every form the credential
 * takes on the wire (as is, percent-encoded as a URL component or as a form
 * field, JSON-escaped) becomes `***` in what the tool returns (before it is
 * capped, spilled, streamed, stored or read by the model) and in failure
 * messages, as workspace secrets are masked in command output.
 */
import { maskDeep, maskSecrets } from "../workspace/SecretMask.ts"
import type { ToolOutcome } from "./ToolOutcome.ts"

/** The forms `credential` takes in a request. */
export const wireForms = (credential: string): ReadonlyArray<string> => [
  ...new Set([
    credential,
    encodeURIComponent(credential),
    new URLSearchParams({ v: credential }).toString().slice(2),
    JSON.stringify(credential).slice(1, -1)
  ])
]

/** `text` with every form of every credential replaced. */
export const maskCredentials = (text: string, credentials: ReadonlyArray<string>): string =>
  credentials.length === 0 ? text : maskSecrets(text, credentials.flatMap(wireForms))

/** A tool's outcome with every form of every credential replaced, in its output and its text. */
export const maskOutcome = (outcome: ToolOutcome, credentials: ReadonlyArray<string>): ToolOutcome => {
  if (credentials.length === 0) return outcome
  const mask = (text: string) => maskCredentials(text, credentials)
  return {
    ...outcome,
    output: maskDeep(outcome.output, mask),
    text: mask(outcome.text),
    ...(outcome.modelText === undefined ? {} : { modelText: mask(outcome.modelText) })
  }
}
