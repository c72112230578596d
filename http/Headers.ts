/** Request headers shared by several routes. */
import { Schema } from "effect"

/** `Idempotency-Key` on POSTs that create or start something. */
export const IdempotencyHeaders = {
  "idempotency-key": Schema.optionalKey(Schema.String)
}
