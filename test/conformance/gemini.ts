/**
 * Conformance subjects of the Gemini types: `google_ai_studio_gemini` (its key in the default
 * variable) and `gcp_vertex_gemini` (a service account's key file, its access token from the
 * fake's token endpoint), each against its own fake Gemini server.
 */
import type { ConformanceSubject } from "../support/conformance.ts"
import { startFakeGemini } from "../support/fakeGemini.ts"

export const subjects: ReadonlyArray<ConformanceSubject> = [
  {
    type: "google_ai_studio_gemini",
    start: async () => {
      const fake = await startFakeGemini()
      return {
        providerTable: { type: "google_ai_studio_gemini", model_name: "gemini-2.5-flash", api_base: fake.aiStudioBase },
        env: { GOOGLE_AI_STUDIO_API_KEY: fake.apiKey },
        received: () => fake.requests.map((request) => request.body),
        close: fake.close
      }
    }
  },
  {
    type: "gcp_vertex_gemini",
    start: async () => {
      const fake = await startFakeGemini()
      return {
        providerTable: {
          type: "gcp_vertex_gemini",
          model_id: "gemini-2.5-flash",
          project_id: "fake-project",
          location: "us-central1",
          api_base: fake.vertexBase
        },
        env: { GCP_VERTEX_CREDENTIALS_PATH: "service-account.json" },
        files: { "service-account.json": fake.serviceAccount },
        received: () => fake.requests.map((request) => request.body),
        close: fake.close
      }
    }
  }
]
