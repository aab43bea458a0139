/**
 * Tags whose names start with `gateway::` are the gateway's own (`gateway::api_key_public_id`,
 * `gateway::namespace`): a client may not set them, so that stored rows and rate limit
 * scopes can trust them.
 */
import { InvalidRequest } from "../errors.ts"

export const reservedTagPrefix = "gateway::"
export const apiKeyTag = "gateway::api_key_public_id"
export const namespaceTag = "gateway::namespace"
/** which surface a request came through (`anthropic_messages`, ...), set by the surfaces of issue 37 */
export const surfaceTag = "gateway::surface"
/** `"true"` on a streamed inference stored though its stream was cut short (the client left, the provider failed): partial output, the cost charged */
export const cutShortTag = "gateway::cut_short"

export const checkClientTags = (
  tags: Readonly<Record<string, string>> | undefined,
  field: string
): InvalidRequest | undefined => {
  for (const key of Object.keys(tags ?? {})) {
    if (key.startsWith(reservedTagPrefix)) {
      return new InvalidRequest({ message: `${field}.${key}: tags starting with "${reservedTagPrefix}" are reserved for the gateway` })
    }
  }
  return undefined
}

/** the tags with the request's API key added, when it came with one */
export const tagsWithApiKey = (
  tags: Readonly<Record<string, string>> | undefined,
  publicId: string | undefined
): Readonly<Record<string, string>> | undefined => (publicId === undefined ? tags : { ...tags, [apiKeyTag]: publicId })
