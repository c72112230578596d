/**
 * Masking of injected secret values in command output (issue 11, secrets):
 * a command may print its own environment, so every occurrence of a value
 * set from a secret becomes `***` before the model, the stream or a log sees
 * it, as CI systems do. When the output was cut at the cap, a tail that is
 * the start of a secret is masked too, so a cut cannot leak a prefix (a
 * truncated output has lost its tail anyway). A secret of several lines (a
 * PEM key, a JSON credential) is also masked line by line, so output that
 * shows it split or prefixed (grep, numbered reads) does not give it away.
 */

/** Lines shorter than this are too common to mask on their own (a PEM's `-----END...` line is not). */
const MinLineLength = 8

/** The secret values, and each line of a multi-line one, longest first. */
const patternsOf = (secrets: ReadonlyArray<string>): ReadonlyArray<string> => {
  const lines = secrets.flatMap((
    s
  ) => (s.includes("\n") ? s.split(/\r?\n/).map((l) => l.trim()).filter((l) => l.length >= MinLineLength) : []))
  return [...new Set([...secrets, ...lines].filter((s) => s.length > 0))].sort((a, b) => b.length - a.length)
}

const mask = "***"

/** Every string inside `value` (a tool's output: arrays, objects) passed through `maskText`. */
export const maskDeep = (value: unknown, maskText: (text: string) => string): unknown =>
  typeof value === "string"
    ? maskText(value)
    : Array.isArray(value)
    ? value.map((v) => maskDeep(v, maskText))
    : typeof value === "object" && value !== null
    ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskDeep(v, maskText)]))
    : value

export const maskSecrets = (
  text: string,
  secrets: ReadonlyArray<string>,
  options: { readonly truncated?: boolean } = {}
): string => {
  // Longest first, so a secret that contains another is masked whole.
  const values = patternsOf(secrets)
  let masked = text
  for (const value of values) masked = masked.split(value).join(mask)
  if (options.truncated === true) {
    for (const value of values) {
      for (let n = Math.min(value.length - 1, masked.length); n >= 1; n--) {
        if (masked.endsWith(value.slice(0, n))) {
          masked = masked.slice(0, masked.length - n) + mask
          break
        }
      }
    }
  }
  return masked
}
