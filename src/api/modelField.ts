/**
 * The `model` field of the OpenAI-style surfaces (the chat route today, the Anthropic and
 * Responses surfaces of issue 37): what it names, a function (optionally one of its variants)
 * or a model, by the gateway's prefixes. One place, so that every surface reads the names an
 * answer writes (`gateway::function_name::<fn>::variant_name::<v>`) back alike.
 */
import * as Result from "effect/Result"
import { InvalidRequest, NotFound } from "../errors.ts"
import { quoted } from "../untrusted.ts"

export const functionModelPrefix = "gateway::function_name::"
export const modelModelPrefix = "gateway::model_name::"
/** between a function's name and its variant's, in an answer's `model` and in a request's */
export const variantSeparator = "::variant_name::"

export type ModelTarget =
  | { readonly function_name: string; readonly variant_name?: string }
  | { readonly model_name: string }

const invalid = (message: string) => Result.fail(new InvalidRequest({ message }))

/** `gateway::function_name::<fn>::variant_name::<variant>`: the name an answer gives what answered */
export const functionVariantModel = (functionName: string, variantName: string): string =>
  `${functionModelPrefix}${functionName}${variantSeparator}${variantName}`

/**
 * What `model` names: `gateway::function_name::<fn>`, `gateway::function_name::<fn>::variant_name::<v>`
 * (the variant pinned, as `gateway::variant_name` pins it) or `gateway::model_name::<model>`;
 * an empty name is a 400 naming `field`, and so is any other text.
 */
export const parseModelField = (model: string, field = "model"): Result.Result<ModelTarget, InvalidRequest> => {
  if (model.startsWith(modelModelPrefix)) {
    const name = model.slice(modelModelPrefix.length)
    return name === "" ? invalid(`${field}: the model_name after \`${modelModelPrefix}\` cannot be empty`) : Result.succeed({ model_name: name })
  }
  if (model.startsWith(functionModelPrefix)) {
    const rest = model.slice(functionModelPrefix.length)
    const separator = rest.indexOf(variantSeparator)
    const functionName = separator < 0 ? rest : rest.slice(0, separator)
    if (functionName === "") return invalid(`${field}: the function_name after \`${functionModelPrefix}\` cannot be empty`)
    if (separator < 0) return Result.succeed({ function_name: functionName })
    const variantName = rest.slice(separator + variantSeparator.length)
    if (variantName === "") return invalid(`${field}: the variant_name after \`${variantSeparator}\` cannot be empty`)
    return Result.succeed({ function_name: functionName, variant_name: variantName })
  }
  return invalid(`${field}: the \`model\` field must start with \`${functionModelPrefix}\` or \`${modelModelPrefix}\`, not ${quoted(model)}`)
}

/**
 * What `model` names on the surfaces whose clients send a provider's model names (Anthropic
 * Messages, OpenAI Responses): the gateway's prefixed names as on the chat route, or a
 * configured model's bare name (so `claude-sonnet-4-5` reaches `[models."claude-sonnet-4-5"]`);
 * any other name is a 404.
 */
export const parseModelOrBareName = (
  model: string,
  configuredModel: (name: string) => boolean
): Result.Result<ModelTarget, InvalidRequest | NotFound> => {
  if (model.startsWith("gateway::")) return parseModelField(model)
  if (configuredModel(model)) return Result.succeed({ model_name: model })
  return Result.fail(
    new NotFound({
      message: `model: unknown model ${quoted(model)}: not a configured model, nor ${functionModelPrefix}<fn> or ${modelModelPrefix}<model>`
    })
  )
}

/**
 * The variant a request pins, from its `model` and its `gateway::variant_name` (either, or both
 * when they agree); a 400 naming `variantField` when they differ.
 */
export const pinnedVariant = (
  target: ModelTarget,
  variantName: string | undefined,
  variantField: string
): Result.Result<string | undefined, InvalidRequest> => {
  const fromModel = "variant_name" in target ? target.variant_name : undefined
  if (fromModel !== undefined && variantName !== undefined && fromModel !== variantName) {
    return invalid(`${variantField}: ${quoted(variantName)} differs from the variant ${quoted(fromModel)} that \`model\` names`)
  }
  return Result.succeed(variantName ?? fromModel)
}
