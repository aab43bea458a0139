/** The `openai` codec replayed on its recorded fixtures (`src/providers/openai/fixtures/`). */
import { openAiCodec } from "../../src/providers/openai/index.ts"
import { fixtureSuite } from "../support/codecFixtureSuite.ts"

fixtureSuite("openai", openAiCodec, {
  settings: {},
  model: "gpt-4o-mini",
  modelName: "gpt",
  providerName: "openai",
  apiKey: "sk-test-key-123"
})
