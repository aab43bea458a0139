/**
 * The Gemini codec (`google_ai_studio_gemini`) replayed on its recorded fixtures
 * (`src/providers/gemini/fixtures/`); its streams are asked at `:streamGenerateContent?alt=sse`
 * and framed with CRLF.
 */
import { aiStudioCodec } from "../../src/providers/gemini/index.ts"
import { fixtureSuite } from "../support/codecFixtureSuite.ts"

fixtureSuite("gemini", aiStudioCodec, {
  settings: {},
  model: "gemini-2.5-flash",
  modelName: "gemini",
  providerName: "google",
  apiKey: "AIza-test-key-123",
  streamUrl: "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
})
