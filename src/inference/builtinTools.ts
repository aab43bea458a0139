/**
 * A surface's built-in tools (Anthropic's server tools, the Responses API's web search...) go
 * only to providers of their family (src/providers/wireRequest.ts); with
 * `[gateway] unsupported_builtin_tools = "drop"` the others answer without them, and the client
 * is told so in a `gateway-warning` response header, so an agent keeps working on any model.
 */
import { providerFamily } from "../providers/families.ts"
import type { ModelCallOrigin } from "./modelCall.ts"
import type { PreparedInference } from "./prepare.ts"

/** a header value carries printable ASCII only: the tools' names are the client's */
const headerSafe = (text: string): string => text.replace(/[^\x20-\x7e]/g, "?")

/** The warning naming the built-in tools the answering provider did not get, or undefined. */
export const droppedBuiltinTools = (prepared: PreparedInference, origin: ModelCallOrigin): string | undefined => {
  if (prepared.providerTools.length === 0) return undefined
  const family = providerFamily(origin.provider)
  const dropped: Array<string> = []
  for (const tool of prepared.providerTools) {
    if (tool.family !== undefined && tool.family !== family) dropped.push(tool.label ?? "(unnamed)")
  }
  if (dropped.length === 0) return undefined
  return headerSafe(
    `built-in tools dropped: ${dropped.join(", ")}: provider "${origin.providerName}" of model "${origin.modelName}" (type ${origin.provider.type}) cannot run them`
  )
}
