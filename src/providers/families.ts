/**
 * Provider families: the wire formats a surface's own fields belong to. A field of Anthropic's
 * Messages API the gateway does not model (`metadata`, `service_tier`, server tools,
 * `anthropic-beta`...) is passed on only to providers that speak that API, and dropped for
 * the others (issue 37).
 */
import type { ProviderConfig } from "../config/types.ts"
import type { ModelRequest, RequestBlock, RequestMessage } from "../inference/types.ts"
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

/**
 * Whose signatures a thought made by a provider of `providerType` carries: providers of one
 * signature family read each other's (Anthropic and Vertex's Claude), no other. OpenAI's
 * Responses API signs (its encrypted reasoning); Chat Completions never does.
 */
export const signatureFamilyOf = (providerType: string): string => {
  if (anthropicTypes.has(providerType)) return "anthropic"
  if (providerType === "google_ai_studio_gemini" || providerType === "gcp_vertex_gemini") return "gemini"
  return providerType
}

/** a thought or an `unknown` block made by another signature family than the provider's: it cannot read it */
const foreign = (block: RequestBlock, family: string): boolean =>
  (block.type === "thought" && block.signature !== undefined || block.type === "unknown" && block.modelProviderName === undefined) &&
  block.providerType !== undefined && signatureFamilyOf(block.providerType) !== family

/**
 * `request` as a provider of `providerType` may take it: another family's thought signatures
 * are left out (the thought's text stays, which the codecs send as they send an unsigned
 * thought's), and so are its `unknown` blocks (a client's redacted thinking); thoughts and blocks
 * that do not say their maker go as before. The request itself when nothing is foreign.
 */
export const requestForProvider = (request: ModelRequest, providerType: string): ModelRequest => {
  const family = signatureFamilyOf(providerType)
  let messages: Array<RequestMessage> | undefined
  for (let i = 0; i < request.messages.length; i++) {
    const message = request.messages[i]
    if (!message.content.some((block) => foreign(block, family))) continue
    messages ??= request.messages.slice()
    messages[i] = {
      role: message.role,
      content: message.content.flatMap((block): ReadonlyArray<RequestBlock> => {
        if (!foreign(block, family)) return [block]
        if (block.type !== "thought") return []
        const { signature: _signature, ...unsigned } = block
        return [unsigned]
      })
    }
  }
  return messages === undefined ? request : { ...request, messages }
}

/** how a surface hands a signature its own API's providers did not make to its client: the maker's type travels with it */
const wrappedPrefix = "gateway.v1."

/**
 * A thought's signature as a client of a surface of `surfaceFamily` receives it: as it is when
 * that family made it (a client may take it to the vendor), else wrapped with its maker's type
 * (`gateway.v1.<provider type>.<signature>`), so that it comes back with its maker known and no
 * state kept. Anthropic's, Gemini's and OpenAI's signatures are base64 or Fernet text, without
 * dots: a wrapped one cannot be taken for one of theirs.
 */
export const signatureForClient = (signature: string, providerType: string | undefined, surfaceFamily: string): string =>
  providerType === undefined || signatureFamilyOf(providerType) === surfaceFamily ? signature : `${wrappedPrefix}${providerType}.${signature}`

/** a signature a client sent back: its maker (`surfaceFamily`'s own when not wrapped) and the signature itself */
export const signatureFromClient = (text: string, surfaceFamily: string): { readonly providerType: string; readonly signature: string } => {
  if (!text.startsWith(wrappedPrefix)) return { providerType: surfaceFamily, signature: text }
  const dot = text.indexOf(".", wrappedPrefix.length)
  return dot < 0 ? { providerType: surfaceFamily, signature: text } : { providerType: text.slice(wrappedPrefix.length, dot), signature: text.slice(dot + 1) }
}
