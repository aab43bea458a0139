/**
 * Token counting (the Anthropic surface's `count_tokens`): how many input tokens a prepared
 * inference would send, asked of the provider that would answer it first. The first variant to
 * try (the pinned one, or the first drawn) must call one model (`chat_completion`); it renders
 * the input with its templates, and its model's first provider in routing order counts the
 * request when its type has a token-counting API. No inference runs: nothing is rate-limited,
 * read from the cache or stored, and there is no fallback (another provider's count would be
 * another tokenizer's).
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { ProviderConfig } from "../config/types.ts"
import { type AllProvidersFailed, InvalidRequest } from "../errors.ts"
import { ProviderFailure } from "../providers/failure.ts"
import { providerTypes } from "../providers/registry.ts"
import { Models } from "../services.ts"
import type { HttpTransport } from "../transport.ts"
import { quoted } from "../untrusted.ts"
import { renderInput } from "./input.ts"
import { buildModelRequest } from "./modelRequest.ts"
import type { PreparedInference } from "./prepare.ts"
import { providerCall } from "./providerCall.ts"
import { allFailed } from "./routing.ts"
import type { TemplateEngine } from "./templates.ts"
import { tightest, totalLimit, within } from "./timeouts.ts"

/** the provider types whose clients count tokens, as a sentence's list ("a, b and c") */
const countingTypes = (): string => {
  const types = [...providerTypes.values()].filter((definition) => definition.countTokens === true).map((definition) => definition.type)
  return types.length < 2 ? types.join("") : `${types.slice(0, -1).join(", ")} and ${types[types.length - 1]}`
}

const uncountable = (modelName: string, provider: ProviderConfig) =>
  new InvalidRequest({
    message: `count_tokens: model ${quoted(modelName)} is answered first by provider ${quoted(provider.name)} of type ${provider.type}, ` +
      `which has no token-counting API (${countingTypes()} have one)`
  })

export const countInputTokens = (
  prepared: PreparedInference,
  templates: TemplateEngine
): Effect.Effect<number, InvalidRequest | AllProvidersFailed, Models | HttpTransport> =>
  Effect.flatMap(Models, (models) =>
    Effect.clockWith((clock) => {
      const variant = prepared.variants[0]
      if (variant.type !== "chat_completion") {
        return Effect.fail(
          new InvalidRequest({
            message: `count_tokens: variant ${quoted(variant.name)} of function ${quoted(prepared.functionName)} is of type ${variant.type}, ` +
              `which makes more than one model call or changes its input; only a chat_completion variant's input can be counted (pin one)`
          })
        )
      }
      const rendered = renderInput(prepared.request.input, prepared.fn, variant, templates)
      if (Result.isFailure(rendered)) return Effect.fail(new InvalidRequest({ message: `${rendered.failure.path}: ${rendered.failure.message}` }))
      const request = buildModelRequest(prepared, variant, rendered.success)
      const model = models.get(variant.model)!
      const modelName = model.config.name
      const provider = model.providers[0]
      const count = provider.client.countTokens
      if (count === undefined) return Effect.fail(uncountable(modelName, provider.config))
      // a provider's failure is the model's, as an inference's is
      const failed = (failure: ProviderFailure) => allFailed(modelName, [{ name: provider.config.name, failure, atMs: clock.currentTimeMillisUnsafe() }])
      const call = providerCall(request, modelName, provider.config, variant, prepared)
      if (Result.isFailure(call)) return Effect.fail(call.failure instanceof ProviderFailure ? failed(call.failure) : call.failure)
      const limit = tightest(totalLimit(provider.config.timeouts), totalLimit(model.config.timeouts))
      return within(count(call.success), limit, () => new ProviderFailure({ message: `timed out after ${limit} ms`, timedOut: true })).pipe(
        Effect.mapError((error) => error instanceof ProviderFailure ? failed(error) : error)
      )
    }))
