/** Small readers the answer parsers of several codecs share. */
import { WireProblem } from "./codec.ts"

/** A token count from an answer: a finite number, else 0 (absent, null, or not a number). */
export const tokenCount = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) ? value : 0)

/** A streamed `{"error": ...}` (OpenAI's and Google's shape): its `message`, or the error as JSON. */
export const streamedErrorProblem = (error: unknown): WireProblem => {
  const message = typeof error === "object" && error !== null ? (error as { readonly message?: unknown }).message : undefined
  return new WireProblem(`the provider streamed an error: ${typeof message === "string" ? message : JSON.stringify(error)}`)
}
