/**
 * What running a variant gives, whatever its type: the model call whose answer is the
 * inference's, the function's output made from it, and the other model calls the variant
 * made on the way (candidates, an evaluator, an embedding), which are stored as model
 * inferences of the same inference.
 */
import type { ApiType } from "../../providers/codec.ts"
import type { ModelCallResult, ModelStreamStart } from "../modelCall.ts"
import { type ChatOutputBlock, chatOutput, type JsonOutput, jsonOutput, jsonRawText, respondToolName } from "../output.ts"
import type { PreparedInference } from "../prepare.ts"
import type { ChunkDelta, ModelRequest, OutputBlock, ProviderChunk, RequestMessage, Usage } from "../types.ts"

export type FunctionOutput = ReadonlyArray<ChatOutputBlock> | JsonOutput

/** A model call of an inference besides the one whose answer it is: a row of its own among the model inferences. */
export interface ModelCallRecord {
  readonly modelInferenceId: string
  readonly modelName: string
  readonly providerName: string
  /** the provider's type (`gateway_raw_response` names it) */
  readonly providerType: string
  /**
   * the API the call went through (`gateway_raw_response` names it too); absent on the one
   * record made apart from `callRecord`, DICL's embedding call: `embeddings`
   */
  readonly apiType?: ApiType | undefined
  readonly rawRequest: string
  readonly rawResponse: string
  readonly system?: string | undefined
  readonly inputMessages: ReadonlyArray<RequestMessage>
  readonly output: ReadonlyArray<OutputBlock>
  readonly usage: Usage
  readonly cost?: number | undefined
  readonly responseTimeMs: number
  readonly finishReason?: ModelCallResult["response"]["finishReason"]
  readonly cached: boolean
}

export const callRecord = (call: ModelCallResult, request: ModelRequest): ModelCallRecord => ({
  modelInferenceId: call.modelInferenceId,
  modelName: call.modelName,
  providerName: call.providerName,
  providerType: call.provider.type,
  apiType: call.apiType,
  rawRequest: call.response.rawRequest,
  rawResponse: call.response.rawResponse,
  system: request.system,
  inputMessages: request.messages,
  output: call.response.output,
  usage: call.response.usage,
  cost: call.response.cost,
  responseTimeMs: call.responseTimeMs,
  finishReason: call.response.finishReason,
  cached: call.cached
})

/** A variant's whole answer. */
export interface VariantAnswer {
  /** the call whose answer is the inference's (best-of-n: the chosen candidate's; mixture-of-n: the fuser's) */
  readonly call: ModelCallResult
  readonly request: ModelRequest
  /** the function's output, validated */
  readonly output: FunctionOutput
  /** the variant's other model calls, in the order they were made */
  readonly otherCalls: ReadonlyArray<ModelCallRecord>
  /** `original_response` (spec 2.3): best-of-n's is its evaluator's */
  readonly originalResponse: string
}

/** A variant's streamed answer, once its model's stream has started. */
export interface VariantStream {
  readonly start: ModelStreamStart
  readonly request: ModelRequest
  readonly otherCalls: ReadonlyArray<ModelCallRecord>
  /** the function's output from the blocks the stream brought */
  readonly outputOf: (blocks: ReadonlyArray<OutputBlock>) => FunctionOutput
  /** reshapes the chunks as they come (chain-of-thought's thinking into thought deltas); holds back what it cannot place yet */
  readonly reshape?: ChunkReshaper | undefined
  /** an answer that was whole before it was streamed (best-of-n): what it is, whatever the chunks say */
  readonly whole?: VariantAnswer | undefined
}

export interface ChunkReshaper {
  readonly chunk: (chunk: ProviderChunk) => ProviderChunk
  /** what was held back, at the end of the stream */
  readonly end: () => ProviderChunk | undefined
}

/** The function's output from a model's blocks: chat blocks checked against the tools, or json parsed and checked. */
export const functionOutput = (prepared: PreparedInference, blocks: ReadonlyArray<OutputBlock>): FunctionOutput =>
  prepared.fn.type === "chat" ? chatOutput(blocks, prepared.tools) : jsonOutput(jsonRawText(blocks), prepared.outputSchema)

/**
 * json_mode `tool` on a chat function (`respondToolAsText`): the `respond` tool's argument
 * deltas stream as text deltas of a block with the call's id. The name comes with a call's
 * first delta (`raw_name` is a delta), which tells the calls to reshape.
 */
export const respondAsTextReshaper = (): ChunkReshaper => {
  const respondCalls = new Set<string>()
  const reshaped = (delta: ChunkDelta): ChunkDelta | undefined => {
    if (delta.type !== "tool_call") return delta
    if (delta.raw_name === respondToolName) respondCalls.add(delta.id)
    if (!respondCalls.has(delta.id)) return delta
    return delta.raw_arguments === "" ? undefined : { type: "text", id: delta.id, text: delta.raw_arguments }
  }
  return {
    chunk: (chunk) => {
      if (!chunk.content.some((delta) => delta.type === "tool_call")) return chunk
      const content: Array<ChunkDelta> = []
      for (const delta of chunk.content) {
        const shaped = reshaped(delta)
        if (shaped !== undefined) content.push(shaped)
      }
      return { ...chunk, content }
    },
    end: () => undefined
  }
}

/** usage added up: a variant that made several calls used what they all did */
export const addUsage = (usages: ReadonlyArray<Usage>): Usage => {
  let input = 0
  let output = 0
  let cached: number | undefined
  let written = 0
  for (const usage of usages) {
    input += usage.input_tokens
    output += usage.output_tokens
    if (usage.cached_input_tokens !== undefined) cached = (cached ?? 0) + usage.cached_input_tokens
    written += usage.cache_write_input_tokens ?? 0
  }
  const total: Usage = cached === undefined
    ? { input_tokens: input, output_tokens: output }
    : { input_tokens: input, output_tokens: output, cached_input_tokens: cached }
  return written > 0 ? { ...total, cache_write_input_tokens: written } : total
}

/** costs added up: unknown when any is unknown (unknown is not free) */
export const addCosts = (costs: ReadonlyArray<number | undefined>): number | undefined => {
  let total = 0
  for (const cost of costs) {
    if (cost === undefined) return undefined
    total += cost
  }
  return total
}

/** The output blocks that stream an answer already whole: its chat blocks, or its json as text. */
export const blocksOfOutput = (output: FunctionOutput): ReadonlyArray<OutputBlock> => {
  if (!Array.isArray(output)) return [{ type: "text", text: (output as JsonOutput).raw }]
  return (output as ReadonlyArray<ChatOutputBlock>).map((block): OutputBlock =>
    block.type === "tool_call" ? { type: "tool_call", id: block.id, raw_name: block.raw_name, raw_arguments: block.raw_arguments } : block
  )
}
