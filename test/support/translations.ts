/**
 * A surface's request translation as its unit tests read it (src/anthropicMessages/request.ts,
 * src/openaiResponses/request.ts): the translated request, or the message of the 400 (or 404)
 * answered instead.
 */
import * as Result from "effect/Result"
import { InvalidRequest, NotFound } from "../../src/errors.ts"

export const translationOutcomes = <A>(translate: (body: Record<string, unknown>) => Result.Result<A, InvalidRequest | NotFound>) => {
  /** the translation, or the refusal (an InvalidRequest or a NotFound) */
  const outcome = (body: Record<string, unknown>): A | InvalidRequest | NotFound => Result.merge(translate(body))
  return {
    outcome,
    /** the translation; a refusal is thrown */
    ok: (body: Record<string, unknown>): A => {
      const result = outcome(body)
      if (result instanceof InvalidRequest || result instanceof NotFound) throw result
      return result
    },
    /** the refusal's message; a translation is thrown */
    refused: (body: Record<string, unknown>): string => {
      const result = outcome(body)
      if (result instanceof InvalidRequest || result instanceof NotFound) return result.message
      throw new Error("translated")
    }
  }
}
