/** Every provider type the gateway knows, by the name used in `type` and in `<type>::<model>`. */
import { anthropicProvider } from "./anthropic/index.ts"
import { vertexAnthropicProvider } from "./anthropic/vertex.ts"
import { bedrockProvider } from "./aws/bedrock.ts"
import { sageMakerProvider } from "./aws/sagemaker.ts"
import { azureProvider } from "./azure/index.ts"
import { chatCompletionsMembers, selfHostedMembers } from "./chatCompletionsMembers.ts"
import { dummyProvider } from "./dummy/index.ts"
import { gatewayProvider } from "./gateway/index.ts"
import { aiStudioGeminiProvider, vertexGeminiProvider } from "./gemini/index.ts"
import { mistralProvider } from "./mistral/index.ts"
import { openAiProvider } from "./openai/index.ts"
import type { ProviderDefinition } from "./types.ts"
import { quoted } from "../untrusted.ts"

export const providerTypes: ReadonlyMap<string, ProviderDefinition> = new Map(
  [
    openAiProvider,
    anthropicProvider,
    vertexAnthropicProvider,
    bedrockProvider,
    sageMakerProvider,
    azureProvider,
    mistralProvider,
    aiStudioGeminiProvider,
    vertexGeminiProvider,
    ...chatCompletionsMembers,
    gatewayProvider,
    dummyProvider
  ].map((provider) => [provider.type, provider])
)

/**
 * Types without a `<type>::<model>` short-hand: those whose address or model only a provider
 * table can give (a self-hosted server's `api_base`, an Azure deployment, an AWS region and
 * model id or endpoint, another gateway's URL).
 */
const withoutShorthand: ReadonlySet<string> = new Set([...selfHostedMembers, "azure", "aws_bedrock", "aws_sagemaker", "gateway"])

/** `openai::gpt-4o-mini` -> { type: "openai", model: "gpt-4o-mini" }, for known provider types that have a short-hand */
export const parseShorthandModel = (name: string): { readonly type: string; readonly model: string } | undefined => {
  const separator = name.indexOf("::")
  if (separator <= 0) return undefined
  const type = name.slice(0, separator)
  const model = name.slice(separator + 2)
  return providerTypes.has(type) && !withoutShorthand.has(type) && model !== "" ? { type, model } : undefined
}

/**
 * Why `name`, a `<type>::<model>` short-hand, names no model its type can call (a Vertex
 * resource name whose location is no location, a model id that is no path segment), quoting
 * the name; undefined when it does, or is no short-hand. A short-hand's model comes from a
 * request and goes into the provider's URL: what fails here is refused (a 400 naming the field)
 * before any client is made of it, and no call is ever attempted.
 */
export const shorthandProblem = (name: string): string | undefined => {
  const shorthand = parseShorthandModel(name)
  if (shorthand === undefined) return undefined
  const problem = providerTypes.get(shorthand.type)?.modelNameProblem?.(shorthand.model)
  return problem === undefined ? undefined : `${quoted(name, 200)} names no model the ${shorthand.type} provider type can call: ${problem}`
}
