/** `openai` with `api_type = "responses"`: the OpenAI Responses API against its fake. */
import type { ConformanceSubject } from "../support/conformance.ts"
import { responsesFakeKey, startFakeOpenAiResponses } from "../support/fakeOpenAiResponses.ts"

export const subjects: ReadonlyArray<ConformanceSubject> = [{
  type: "openai",
  label: "openai (responses)",
  start: async () => {
    const fake = await startFakeOpenAiResponses()
    return {
      providerTable: {
        type: "openai",
        api_type: "responses",
        model_name: "gpt-5-mini",
        api_base: fake.apiBase,
        api_key_location: "env::CONFORMANCE_OPENAI_RESPONSES_KEY",
        include_encrypted_reasoning: true
      },
      env: { CONFORMANCE_OPENAI_RESPONSES_KEY: responsesFakeKey },
      close: () => fake.close()
    }
  }
}]
