/** A configuration that cannot work, reported at start as one clear line (src/main.ts). */
import { Data } from "effect"

export class ConfigurationError extends Data.TaggedError("ConfigurationError")<{ readonly message: string }> {}
