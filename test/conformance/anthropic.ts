/** Conformance subjects of `anthropic` and `gcp_vertex_anthropic`, each against its own fake Anthropic server. */
import type { ConformanceSubject } from "../support/conformance.ts"
import { startFakeAnthropic } from "../support/fakeAnthropic.ts"

export const subjects: ReadonlyArray<ConformanceSubject> = [
  {
    type: "anthropic",
    start: async () => {
      const fake = await startFakeAnthropic()
      return {
        providerTable: {
          type: "anthropic",
          model_name: "claude-conformance",
          api_base: fake.apiBase,
          api_key_location: "env::CONFORMANCE_ANTHROPIC_API_KEY"
        },
        env: { CONFORMANCE_ANTHROPIC_API_KEY: fake.apiKey },
        received: () => fake.requests.map((request) => request.body),
        close: fake.close
      }
    }
  },
  {
    type: "gcp_vertex_anthropic",
    start: async () => {
      const fake = await startFakeAnthropic()
      return {
        providerTable: {
          type: "gcp_vertex_anthropic",
          model_id: "claude-conformance@20250101",
          location: "us-east5",
          project_id: "fake-project",
          api_base: fake.url,
          api_key_location: "path::vertex-anthropic-service-account.json"
        },
        env: {},
        files: { "vertex-anthropic-service-account.json": fake.serviceAccount.json },
        received: () => fake.requests.map((request) => request.body),
        close: fake.close
      }
    }
  }
]
