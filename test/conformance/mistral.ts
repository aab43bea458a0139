/** `mistral`: Mistral chat completions against its fake. */
import type { ConformanceSubject, RunningFake } from "../support/conformance.ts"
import { mistralFakeKey, startFakeMistral } from "../support/fakeMistral.ts"

/** the provider table and environment that point the gateway at a running Mistral fake */
export const mistralRunningFake = (
  fake: { readonly apiBase: string; readonly requests: ReadonlyArray<{ readonly body: unknown }>; close(): Promise<void> }
): RunningFake => ({
  providerTable: {
    type: "mistral",
    model_name: "magistral-medium-latest",
    api_base: fake.apiBase,
    api_key_location: "env::CONFORMANCE_MISTRAL_KEY"
  },
  env: { CONFORMANCE_MISTRAL_KEY: mistralFakeKey },
  received: () => fake.requests.map((request) => request.body),
  close: () => fake.close()
})

export const subjects: ReadonlyArray<ConformanceSubject> = [{
  type: "mistral",
  start: async () => mistralRunningFake(await startFakeMistral())
}]
