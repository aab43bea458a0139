/**
 * `experimental_dynamic_in_context_learning` at inference: the input is embedded, the k
 * stored examples of the function and variant nearest to it are read, and they go before the
 * input as user/assistant pairs. How examples are stored and found is `src/dicl/`; the engine
 * carries what does it (`EngineDeps.dicl`), since it needs the embedding models and the store.
 */
import * as Effect from "effect/Effect"
import type { DiclVariant } from "../../config/types.ts"
import { AllProvidersFailed, type InvalidRequest, type RateLimited, type ServiceUnavailable } from "../../errors.ts"
import type { InferenceServices } from "../../services.ts"
import type { PreparedInference } from "../prepare.ts"
import type { RequestMessage } from "../types.ts"
import type { ModelCallRecord } from "./answer.ts"

/** what DICL sends (its examples as user/assistant pairs, then the input), and the embedding call that found them */
export interface DiclContext {
  readonly messages: ReadonlyArray<RequestMessage>
  readonly calls: ReadonlyArray<ModelCallRecord>
}

export type DiclRetrieval = (
  prepared: PreparedInference,
  variant: DiclVariant
) => Effect.Effect<DiclContext, AllProvidersFailed | InvalidRequest | RateLimited | ServiceUnavailable, InferenceServices>

/** the system prompt of a DICL variant without `system_instructions`: how to read what follows */
export const diclDefaultInstructions =
  "Learn from the examples below how inputs map to outputs. Each example is an input in a user message followed by its output " +
  "in an assistant message. The last user message is a new input in the same format: answer it as the examples would, " +
  "in the same form."

/** the examples of `variant` for this input; without a retrieval (no example store) the variant fails, so the next one is tried */
export const diclContext = (prepared: PreparedInference, variant: DiclVariant, retrieval: DiclRetrieval | undefined) =>
  retrieval === undefined
    ? Effect.fail(new AllProvidersFailed({
      message: `variant "${variant.name}" (dynamic in-context learning) has no example store to read its examples from`,
      kind: "upstream"
    }))
    : retrieval(prepared, variant)
