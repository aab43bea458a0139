/** `azure`: Azure OpenAI chat completions against its fake (`api-key`, deployment path, `api-version`). */
import type { ConformanceSubject, RunningFake } from "../support/conformance.ts"
import { azureFakeDeployment, azureFakeKey, startFakeAzure } from "../support/fakeAzure.ts"

/** the provider table and environment that point the gateway at a running Azure fake */
export const azureRunningFake = (
  fake: { readonly endpoint: string; readonly requests: ReadonlyArray<{ readonly body: unknown }>; close(): Promise<void> }
): RunningFake => ({
  providerTable: {
    type: "azure",
    endpoint: fake.endpoint,
    deployment_id: azureFakeDeployment,
    api_key_location: "env::CONFORMANCE_AZURE_KEY"
  },
  env: { CONFORMANCE_AZURE_KEY: azureFakeKey },
  received: () => fake.requests.map((request) => request.body),
  close: () => fake.close()
})

export const subjects: ReadonlyArray<ConformanceSubject> = [{
  type: "azure",
  start: async () => azureRunningFake(await startFakeAzure())
}]
