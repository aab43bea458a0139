/** `azure`: Azure OpenAI chat completions against its fake (`api-key`, deployment path, `api-version`). */
import type { ConformanceSubject } from "../support/conformance.ts"
import { azureFakeDeployment, azureFakeKey, startFakeAzure } from "../support/fakeAzure.ts"

export const subjects: ReadonlyArray<ConformanceSubject> = [{
  type: "azure",
  start: async () => {
    const fake = await startFakeAzure()
    return {
      providerTable: {
        type: "azure",
        endpoint: fake.endpoint,
        deployment_id: azureFakeDeployment,
        api_key_location: "env::CONFORMANCE_AZURE_KEY"
      },
      env: { CONFORMANCE_AZURE_KEY: azureFakeKey },
      close: () => fake.close()
    }
  }
}]
