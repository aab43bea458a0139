/**
 * `/inference`'s answer (spec 2.3, 4.1): the response body of a whole inference, and its
 * `usage`, which batch results (src/batch/results.ts) answer with too.
 */
import { type CompletedInference, totalCost, totalUsage } from "../inference/run.ts"
import type { Usage } from "../inference/types.ts"

/**
 * `/inference`'s `usage`: the tokens, the prompt-cache reads when the provider reported them,
 * and `cost` (the sum over the inference's model calls) when its providers have `cost` rules
 * and they read something; absent otherwise, as unknown is not free.
 */
export const inferenceUsage = (usage: Usage, cost: number | undefined): Record<string, number> => ({
  input_tokens: usage.input_tokens,
  output_tokens: usage.output_tokens,
  ...(usage.cached_input_tokens === undefined ? {} : { cached_input_tokens: usage.cached_input_tokens }),
  ...(cost === undefined ? {} : { cost })
})

/** the response body of a whole inference: `{inference_id, episode_id, variant_name, content | output, usage, finish_reason?, original_response?}` */
export const inferenceResponseBody = (completed: CompletedInference): Record<string, unknown> => {
  const { prepared } = completed
  const body: Record<string, unknown> = {
    inference_id: prepared.inferenceId,
    episode_id: prepared.episodeId,
    variant_name: completed.variant.name
  }
  if (prepared.fn.type === "chat") body.content = completed.output
  else body.output = completed.output
  body.usage = inferenceUsage(totalUsage(completed), totalCost(completed))
  if (completed.finishReason !== undefined) body.finish_reason = completed.finishReason
  if (prepared.request.include_original_response === true) body.original_response = completed.originalResponse
  return body
}
