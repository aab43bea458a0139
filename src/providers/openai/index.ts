/**
 * `openai`: OpenAI Chat Completions, the first member of its family (`chatCompletionsFamily.ts`);
 * with `api_base`, any server that speaks it the same way.
 */
import { hostedCodec } from "../chatCompletionsFamily.ts"
import { wireProvider } from "../runner.ts"

export const openAiCodec = hostedCodec({
  type: "openai",
  defaultApiBase: "https://api.openai.com/v1/",
  defaultCredential: { kind: "env", name: "OPENAI_API_KEY" },
  // OpenAI deprecated `max_tokens` for `max_completion_tokens`, which its reasoning models require
  params: { max_tokens: "max_completion_tokens" }
})

export const openAiProvider = wireProvider(openAiCodec)
