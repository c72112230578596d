/** Request headers shared by several routes. */
import { Schema } from "effect"

/** `Idempotency-Key` on every POST that creates, changes or reaches out to something (http/Idempotent.ts). */
export const IdempotencyHeaders = {
  "idempotency-key": Schema.optionalKey(
    Schema.String.annotate({
      description:
        "1 to 255 characters. A retry with the same key and body within 24 hours answers the first answer; " +
        "another body under the key is 409 `idempotency_key_conflict`, a retry while the first still runs 503 `service_unavailable`."
    })
  )
}
