/** `mistral`: Mistral chat completions against its fake. */
import type { ConformanceSubject } from "../support/conformance.ts"
import { mistralFakeKey, startFakeMistral } from "../support/fakeMistral.ts"

export const subjects: ReadonlyArray<ConformanceSubject> = [{
  type: "mistral",
  start: async () => {
    const fake = await startFakeMistral()
    return {
      providerTable: {
        type: "mistral",
        model_name: "magistral-medium-latest",
        api_base: fake.apiBase,
        api_key_location: "env::CONFORMANCE_MISTRAL_KEY"
      },
      env: { CONFORMANCE_MISTRAL_KEY: mistralFakeKey },
      close: () => fake.close()
    }
  }
}]
