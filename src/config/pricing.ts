/**
 * `pricing = { input_per_million, output_per_million, cache_read_per_million, cache_write_per_million }`
 * on a model or one of its providers -> that provider's `cost` rules. Each provider type reports
 * usage in its own wire format, so a built-in table says where its raw answer (whole, and the
 * raw chunks of a stream) carries each count, and whether its cache reads are counted within
 * the input tokens (OpenAI, Gemini: priced at `cache_read - input`) or apart from them
 * (Anthropic, Bedrock: priced at `cache_read`). A provider's own `cost` rules win.
 */
import type { CostRule, ModelPrices } from "../inference/cost.ts"
import { parsePointer } from "../inference/extraBody.ts"

/** Where one answer form reports its usage (JSON Pointers into the raw response or a raw chunk). */
interface UsagePointers {
  readonly input: string
  readonly output: string
  /** more output tokens reported apart (Gemini's thinking tokens) */
  readonly extraOutput?: string
  /** cache reads already counted in `input` */
  readonly cacheReadWithin?: string
  /** cache reads not counted in `input` */
  readonly cacheReadApart?: string
  /** cache writes not counted in `input` */
  readonly cacheWriteApart?: string
}

/** How a provider type reports usage: in a whole answer, and in a stream (absent: a stream is not priced) */
interface UsageReport {
  readonly whole: UsagePointers
  readonly stream?: UsagePointers
}

const chatCompletions: UsagePointers = {
  input: "/usage/prompt_tokens",
  output: "/usage/completion_tokens",
  cacheReadWithin: "/usage/prompt_tokens_details/cached_tokens"
}
const chatCompletionsReport: UsageReport = { whole: chatCompletions, stream: chatCompletions }

const responsesApi: UsageReport = {
  whole: { input: "/usage/input_tokens", output: "/usage/output_tokens", cacheReadWithin: "/usage/input_tokens_details/cached_tokens" },
  // `response.completed` carries the whole response
  stream: {
    input: "/response/usage/input_tokens",
    output: "/response/usage/output_tokens",
    cacheReadWithin: "/response/usage/input_tokens_details/cached_tokens"
  }
}

const messagesApi: UsageReport = {
  whole: {
    input: "/usage/input_tokens",
    output: "/usage/output_tokens",
    cacheReadApart: "/usage/cache_read_input_tokens",
    cacheWriteApart: "/usage/cache_creation_input_tokens"
  },
  // input and cache counts in `message_start`, the output count in the last `message_delta`
  stream: {
    input: "/message/usage/input_tokens",
    output: "/usage/output_tokens",
    cacheReadApart: "/message/usage/cache_read_input_tokens",
    cacheWriteApart: "/message/usage/cache_creation_input_tokens"
  }
}

const gemini: UsagePointers = {
  input: "/usageMetadata/promptTokenCount",
  output: "/usageMetadata/candidatesTokenCount",
  extraOutput: "/usageMetadata/thoughtsTokenCount",
  cacheReadWithin: "/usageMetadata/cachedContentTokenCount"
}

// the metadata event's payload is the stream's raw chunk, shaped as the whole answer's usage
const converse: UsagePointers = {
  input: "/usage/inputTokens",
  output: "/usage/outputTokens",
  cacheReadApart: "/usage/cacheReadInputTokens",
  cacheWriteApart: "/usage/cacheWriteInputTokens"
}

const deepseek: UsagePointers = {
  input: "/usage/prompt_tokens",
  output: "/usage/completion_tokens",
  cacheReadWithin: "/usage/prompt_cache_hit_tokens"
}

/**
 * The built-in table, by provider type (and, for `openai`, its `api_type`). `aws_sagemaker`
 * (the hosted model's own format) and `gateway` (another gateway) have no entry: they need
 * `cost` rules. The dummy streams no raw chunks, so only its whole answers are priced.
 */
const usageReports: Readonly<Record<string, (settings: Readonly<Record<string, unknown>>) => UsageReport>> = {
  openai: (settings) => settings.api_type === "responses" ? responsesApi : chatCompletionsReport,
  azure: () => chatCompletionsReport,
  mistral: () => chatCompletionsReport,
  deepseek: () => ({ whole: deepseek, stream: deepseek }),
  fireworks: () => chatCompletionsReport,
  groq: () => chatCompletionsReport,
  hyperbolic: () => chatCompletionsReport,
  openrouter: () => chatCompletionsReport,
  together: () => chatCompletionsReport,
  xai: () => chatCompletionsReport,
  sglang: () => chatCompletionsReport,
  vllm: () => chatCompletionsReport,
  tgi: () => chatCompletionsReport,
  anthropic: () => messagesApi,
  gcp_vertex_anthropic: () => messagesApi,
  google_ai_studio_gemini: () => ({ whole: gemini, stream: gemini }),
  gcp_vertex_gemini: () => ({ whole: gemini, stream: gemini }),
  aws_bedrock: () => ({ whole: converse, stream: converse }),
  dummy: () => ({ whole: { input: "/usage/input_tokens", output: "/usage/output_tokens" } })
}

export const pricedProviderTypes: ReadonlyArray<string> = Object.keys(usageReports)

const rule = (pointer: string, perMillion: number, required: boolean, answer: CostRule["answer"]): CostRule => ({
  pointer,
  tokens: parsePointer(pointer)!,
  perUnit: perMillion / 1_000_000,
  required,
  answer
})

const rulesOf = (pointers: UsagePointers, prices: ModelPrices, answer: CostRule["answer"]): Array<CostRule> => {
  const cacheRead = prices.cacheReadPerMillion ?? prices.inputPerMillion
  const cacheWrite = prices.cacheWritePerMillion ?? prices.inputPerMillion
  // input and output are required: a stream that reports no usage has an unknown cost, not 0
  const rules = [rule(pointers.input, prices.inputPerMillion, true, answer), rule(pointers.output, prices.outputPerMillion, true, answer)]
  if (pointers.extraOutput !== undefined) rules.push(rule(pointers.extraOutput, prices.outputPerMillion, false, answer))
  if (pointers.cacheReadWithin !== undefined && cacheRead !== prices.inputPerMillion) {
    rules.push(rule(pointers.cacheReadWithin, cacheRead - prices.inputPerMillion, false, answer))
  }
  if (pointers.cacheReadApart !== undefined) rules.push(rule(pointers.cacheReadApart, cacheRead, false, answer))
  if (pointers.cacheWriteApart !== undefined) rules.push(rule(pointers.cacheWriteApart, cacheWrite, false, answer))
  return rules
}

/** Does the type report cache writes apart (so `cache_write_per_million` prices something)? */
export const reportsCacheWrites = (type: string, settings: Readonly<Record<string, unknown>>): boolean =>
  usageReports[type]?.(settings).whole.cacheWriteApart !== undefined

/** The cost rules of a provider of `type` priced at `prices`, or undefined when the type has no built-in usage pointers. */
export const pricingRules = (
  type: string,
  settings: Readonly<Record<string, unknown>>,
  prices: ModelPrices
): ReadonlyArray<CostRule> | undefined => {
  const report = usageReports[type]?.(settings)
  if (report === undefined) return undefined
  if (report.stream === report.whole) return rulesOf(report.whole, prices, undefined)
  return [...rulesOf(report.whole, prices, "whole"), ...(report.stream === undefined ? [] : rulesOf(report.stream, prices, "stream"))]
}
