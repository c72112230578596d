/**
 * The signature of every outbound delivery (hooks, hook tests, result
 * handlers): `Svc-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`,
 * the scheme Stripe uses, so `stripe.webhooks.constructEvent` verifies it.
 * Receivers should also reject timestamps older than a few minutes.
 */
import { Redacted } from "effect"
import { createHmac } from "node:crypto"

export const signatureHeader = (secret: Redacted.Redacted, timestampSeconds: number, body: string): string => {
  const mac = createHmac("sha256", Redacted.value(secret)).update(`${timestampSeconds}.${body}`).digest("hex")
  return `t=${timestampSeconds},v1=${mac}`
}
