/**
 * The span of one model call, as the OpenTelemetry GenAI semantic conventions
 * describe it: named `chat <model>`, of kind client, with the operation, the
 * provider and model asked for, and the tokens the call used. The run and
 * step it belongs to are on it too (`svc.run.id`, `svc.run.step`), so a
 * run's calls can be found across traces.
 */
import { Effect } from "effect"

/** `openai:gpt-4.1` is provider `openai`, model `gpt-4.1`; the built-in `scripted` is both. */
export const routeParts = (route: string): { readonly provider: string; readonly model: string } => {
  const at = route.indexOf(":")
  return at <= 0 ? { provider: route, model: route } : { provider: route.slice(0, at), model: route.slice(at + 1) }
}

/** Runs `call` (one model step) inside its GenAI span; the tokens it reports are recorded on the span. */
export const traced = <
  A extends { readonly tokens: { readonly inputTokens: number; readonly outputTokens: number } },
  E,
  R
>(
  route: string,
  run: { readonly runId: string; readonly step: number },
  call: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> => {
  const { provider, model } = routeParts(route)
  return call.pipe(
    Effect.tap(({ tokens }) =>
      Effect.annotateCurrentSpan({
        "gen_ai.usage.input_tokens": tokens.inputTokens,
        "gen_ai.usage.output_tokens": tokens.outputTokens
      })
    ),
    Effect.withSpan(`chat ${model}`, {
      kind: "client",
      attributes: {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider,
        // The name before semantic conventions 1.37, still what many backends group by.
        "gen_ai.system": provider,
        "gen_ai.request.model": model,
        "svc.model.route": route,
        "svc.run.id": run.runId,
        "svc.run.step": run.step
      }
    })
  )
}
