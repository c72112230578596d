/**
 * An expected failure of a browser tool, read by the model as `code: message`:
 * `browser_unavailable` (the browser could not start), `browser_limit` (a
 * limit ended it), `browser_refused` (the network policy refuses the
 * destination), `browser_error` (an action failed: no such ref, a timeout, a
 * page error), `browser_no_file_chooser`.
 */
import { Schema } from "effect"

export class BrowserError extends Schema.TaggedError<BrowserError>()("BrowserError", {
  code: Schema.String,
  message: Schema.String
}) {}
