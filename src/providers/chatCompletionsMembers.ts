/**
 * The members of the Chat Completions family besides OpenAI (`openai/`), declared: where each
 * is served, its key, the parameters it refuses (`null`: not sent) or renames, and how it takes
 * json_mode `strict`. Each follows its provider's API reference (see the provider
 * tables of docs/providers.md); what differs between models of one provider (a reasoning model ignoring
 * `temperature`) is the provider's to refuse, not the gateway's to guess.
 */
import { hostedCodec, type ParamRule, selfHostedCodec } from "./chatCompletionsFamily.ts"
import type { InferenceParams } from "../inference/params.ts"
import { wireProvider } from "./wireProvider.ts"
import type { ProviderDefinition } from "./types.ts"

const env = (name: string) => ({ kind: "env", name }) as const

/** OpenAI-only parameters the other servers do not take */
const notOpenAi: Partial<Record<keyof InferenceParams, ParamRule>> = { service_tier: null, verbosity: null }
/** for the servers whose API reference lists `top_k` beside OpenAI's sampling parameters */
const withTopK: Partial<Record<keyof InferenceParams, ParamRule>> = { top_k: "top_k" }

/**
 * DeepSeek (api-docs.deepseek.com): `reasoning_content` is returned as thoughts (and never sent
 * back: DeepSeek answers 400 when it is); JSON Output is `json_object` only, so `strict` asks
 * for `json_object` and the gateway checks the schema on the answer; no `seed`, no `reasoning_effort`.
 */
export const deepSeekCodec = hostedCodec({
  type: "deepseek",
  defaultApiBase: "https://api.deepseek.com/",
  defaultCredential: env("DEEPSEEK_API_KEY"),
  params: { ...notOpenAi, seed: null, reasoning_effort: null },
  structuredOutput: "json_object"
})

/** Fireworks (docs.fireworks.ai): `json_schema` structured output, `reasoning_effort` for its reasoning models. */
export const fireworksCodec = hostedCodec({
  type: "fireworks",
  defaultApiBase: "https://api.fireworks.ai/inference/v1/",
  defaultCredential: env("FIREWORKS_API_KEY"),
  params: { ...notOpenAi, ...withTopK }
})

/**
 * Groq (console.groq.com/docs/openai): `max_completion_tokens` (its `max_tokens` is deprecated),
 * its own `service_tier` values passed as they are; no `verbosity`; `json_schema` structured output.
 */
export const groqCodec = hostedCodec({
  type: "groq",
  defaultApiBase: "https://api.groq.com/openai/v1/",
  defaultCredential: env("GROQ_API_KEY"),
  params: { max_tokens: "max_completion_tokens", verbosity: null }
})

/** Hyperbolic (docs.hyperbolic.xyz): OpenAI's sampling parameters; JSON mode without a schema. */
export const hyperbolicCodec = hostedCodec({
  type: "hyperbolic",
  defaultApiBase: "https://api.hyperbolic.xyz/v1/",
  defaultCredential: env("HYPERBOLIC_API_KEY"),
  params: { ...notOpenAi, ...withTopK, reasoning_effort: null },
  structuredOutput: "json_object"
})

/**
 * OpenRouter (openrouter.ai/docs): OpenAI's request shape for every routed model, `reasoning`
 * returned as thoughts, `json_schema` structured output (where the routed model has it).
 */
export const openRouterCodec = hostedCodec({
  type: "openrouter",
  defaultApiBase: "https://openrouter.ai/api/v1/",
  defaultCredential: env("OPENROUTER_API_KEY"),
  params: { ...withTopK, service_tier: null }
})

/** Together (docs.together.ai): `json_schema` structured output, `reasoning_effort` for its reasoning models. */
export const togetherCodec = hostedCodec({
  type: "together",
  defaultApiBase: "https://api.together.xyz/v1/",
  defaultCredential: env("TOGETHER_API_KEY"),
  params: { ...notOpenAi, ...withTopK }
})

/** xAI (docs.x.ai): `reasoning_content` returned as thoughts, `json_schema` structured output. */
export const xaiCodec = hostedCodec({
  type: "xai",
  defaultApiBase: "https://api.x.ai/v1/",
  defaultCredential: env("XAI_API_KEY"),
  params: notOpenAi
})

/** SGLang's OpenAI-compatible server: `json_schema` structured output (its grammar backend). */
export const sglangCodec = selfHostedCodec({
  type: "sglang",
  defaultCredential: env("SGLANG_API_KEY"),
  params: { ...notOpenAi, ...withTopK }
})

/** vLLM's OpenAI-compatible server: `json_schema` structured output (guided decoding). */
export const vllmCodec = selfHostedCodec({
  type: "vllm",
  defaultCredential: env("VLLM_API_KEY"),
  params: { ...notOpenAi, ...withTopK }
})

/**
 * TGI's Messages API (huggingface.co/docs/text-generation-inference): structured output is its
 * own grammar (`response_format: {type: "json", value: <schema>}`); no `reasoning_effort`. A TGI
 * server serves one model, so `model_name` may be left out (as TensorZero allows): `tgi` is sent.
 */
export const tgiCodec = selfHostedCodec({
  type: "tgi",
  defaultCredential: env("TGI_API_KEY"),
  params: { ...notOpenAi, reasoning_effort: null },
  structuredOutput: "tgi",
  defaultModel: "tgi"
})

export const chatCompletionsMembers: ReadonlyArray<ProviderDefinition> = [
  wireProvider(deepSeekCodec),
  wireProvider(fireworksCodec),
  wireProvider(groqCodec),
  wireProvider(hyperbolicCodec),
  wireProvider(openRouterCodec),
  wireProvider(togetherCodec),
  wireProvider(xaiCodec),
  wireProvider(sglangCodec),
  wireProvider(vllmCodec),
  wireProvider(tgiCodec)
]

/** Members without a `<type>::<model>` short-hand: the self-hosted servers, whose `api_base` only a provider table can give. */
export const selfHostedMembers: ReadonlyArray<string> = ["sglang", "vllm", "tgi"]
