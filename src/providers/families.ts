/**
 * Provider families: the wire formats a surface's own fields belong to. A field of Anthropic's
 * Messages API the gateway does not model (`metadata`, `service_tier`, server tools,
 * `anthropic-beta`...) is passed on only to providers that speak that API, and dropped for
 * the others (issue 37).
 */
import type { ProviderConfig } from "../config/types.ts"
import { responsesModelPrefix } from "./openai/index.ts"

export type ProviderFamily = "anthropic" | "openai_responses" | "other"

const anthropicTypes: ReadonlySet<string> = new Set(["anthropic", "gcp_vertex_anthropic"])

/** the family of the API a configured provider speaks */
export const providerFamily = (provider: Pick<ProviderConfig, "type" | "modelName" | "settings">): ProviderFamily => {
  if (anthropicTypes.has(provider.type)) return "anthropic"
  if (provider.type === "openai") {
    const apiType = provider.settings.api_type
    if (apiType === "responses" || (apiType === undefined && provider.modelName.startsWith(responsesModelPrefix))) return "openai_responses"
  }
  return "other"
}
