/** Every provider type the gateway knows, by the name used in `type` and in `<type>::<model>`. */
import { chatCompletionsMembers, withoutShorthand } from "./chatCompletionsMembers.ts"
import { dummyProvider } from "./dummy/index.ts"
import { openAiProvider } from "./openai/index.ts"
import type { ProviderDefinition } from "./types.ts"

export const providerTypes: ReadonlyMap<string, ProviderDefinition> = new Map(
  [openAiProvider, ...chatCompletionsMembers, dummyProvider].map((provider) => [provider.type, provider])
)

/** `openai::gpt-4o-mini` -> { type: "openai", model: "gpt-4o-mini" }, for known provider types that have a short-hand */
export const parseShorthandModel = (name: string): { readonly type: string; readonly model: string } | undefined => {
  const separator = name.indexOf("::")
  if (separator <= 0) return undefined
  const type = name.slice(0, separator)
  const model = name.slice(separator + 2)
  return providerTypes.has(type) && !withoutShorthand.has(type) && model !== "" ? { type, model } : undefined
}
