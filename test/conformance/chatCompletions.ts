/**
 * Conformance subjects of the Chat Completions family: `openai` and every member declared in
 * src/providers/chatCompletionsMembers.ts, each against the shared fake with its own path, key
 * (its default credential variable) and way of asking for structured output.
 */
import type { ConformanceSubject } from "../support/conformance.ts"
import { type ChatCompletionsExpectations, chatCompletionsSubject } from "../support/fakeChatCompletions.ts"

const family: ReadonlyArray<ChatCompletionsExpectations> = [
  { type: "openai", basePath: "/v1/", keyVariable: "OPENAI_API_KEY", structuredOutput: "json_schema" },
  { type: "deepseek", basePath: "/", keyVariable: "DEEPSEEK_API_KEY", structuredOutput: "json_object" },
  { type: "fireworks", basePath: "/inference/v1/", keyVariable: "FIREWORKS_API_KEY", structuredOutput: "json_schema" },
  { type: "groq", basePath: "/openai/v1/", keyVariable: "GROQ_API_KEY", structuredOutput: "json_schema" },
  { type: "hyperbolic", basePath: "/v1/", keyVariable: "HYPERBOLIC_API_KEY", structuredOutput: "json_object" },
  { type: "openrouter", basePath: "/api/v1/", keyVariable: "OPENROUTER_API_KEY", structuredOutput: "json_schema" },
  { type: "together", basePath: "/v1/", keyVariable: "TOGETHER_API_KEY", structuredOutput: "json_schema" },
  { type: "xai", basePath: "/v1/", keyVariable: "XAI_API_KEY", structuredOutput: "json_schema" },
  { type: "sglang", basePath: "/v1/", keyVariable: "SGLANG_API_KEY", structuredOutput: "json_schema" },
  { type: "vllm", basePath: "/v1/", keyVariable: "VLLM_API_KEY", structuredOutput: "json_schema" },
  { type: "tgi", basePath: "/v1/", keyVariable: "TGI_API_KEY", structuredOutput: "tgi" }
]

export const subjects: ReadonlyArray<ConformanceSubject> = family.map((expected) => chatCompletionsSubject(expected))
