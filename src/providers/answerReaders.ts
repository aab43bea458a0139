/** Small readers the answer parsers of several codecs share. */
import type { Usage } from "../inference/types.ts"
import { WireProblem } from "./codec.ts"

/** A token count from an answer: a finite number, else 0 (absent, null, or not a number). */
export const tokenCount = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) ? value : 0)

/** A streamed `{"error": ...}` (OpenAI's and Google's shape): its `message`, or the error as JSON. */
export const streamedErrorProblem = (error: unknown): WireProblem => {
  const message = typeof error === "object" && error !== null ? (error as { readonly message?: unknown }).message : undefined
  return new WireProblem(`the provider streamed an error: ${typeof message === "string" ? message : JSON.stringify(error)}`)
}

/**
 * Usage of an API that counts prompt-cache reads and writes apart from its input tokens
 * (Anthropic, Bedrock Converse): the gateway's input tokens are all of them, of which
 * `cached_input_tokens` (when the answer says, `readSaid`) were read from the cache.
 */
export const cacheApartUsage = (input: unknown, output: unknown, cacheRead: unknown, cacheWrite: unknown, readSaid: boolean): Usage => {
  const read = tokenCount(cacheRead)
  const written = tokenCount(cacheWrite)
  const total = tokenCount(input) + read + written
  const usage: Usage = readSaid
    ? { input_tokens: total, output_tokens: tokenCount(output), cached_input_tokens: read }
    : { input_tokens: total, output_tokens: tokenCount(output) }
  return written > 0 ? { ...usage, cache_write_input_tokens: written } : usage
}

/** A token-counting answer's count (`field` of its JSON object, a non-negative integer), or why it has none. */
export const countedTokens = (text: string, field: string): number | WireProblem => {
  let count: unknown
  try {
    count = (JSON.parse(text) as Record<string, unknown> | null)?.[field]
  } catch {
    return new WireProblem("the provider's token count is not JSON")
  }
  return typeof count === "number" && Number.isSafeInteger(count) && count >= 0
    ? count
    : new WireProblem(`the provider's token count has no ${field} (a non-negative integer)`)
}
