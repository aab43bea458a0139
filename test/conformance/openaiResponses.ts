/** `openai` with `api_type = "responses"`: the OpenAI Responses API against its fake. */
import type { ConformanceSubject, RunningFake } from "../support/conformance.ts"
import { responsesFakeKey, startFakeOpenAiResponses } from "../support/fakeOpenAiResponses.ts"

/** the provider table and environment that point the gateway at a running Responses API fake */
export const responsesRunningFake = (
  fake: { readonly apiBase: string; readonly requests: ReadonlyArray<{ readonly body: unknown }>; close(): Promise<void> }
): RunningFake => ({
  providerTable: {
    type: "openai",
    api_type: "responses",
    model_name: "gpt-5-mini",
    api_base: fake.apiBase,
    api_key_location: "env::CONFORMANCE_OPENAI_RESPONSES_KEY",
    include_encrypted_reasoning: true
  },
  env: { CONFORMANCE_OPENAI_RESPONSES_KEY: responsesFakeKey },
  received: () => fake.requests.map((request) => request.body),
  close: () => fake.close()
})

export const subjects: ReadonlyArray<ConformanceSubject> = [{
  type: "openai",
  label: "openai (responses)",
  start: async () => responsesRunningFake(await startFakeOpenAiResponses())
}]
