/** The `anthropic` codec replayed on its recorded fixtures (`src/providers/anthropic/fixtures/`). */
import { anthropicCodec } from "../../src/providers/anthropic/index.ts"
import { fixtureSuite } from "../support/codecFixtureSuite.ts"

fixtureSuite("anthropic", anthropicCodec, {
  settings: {},
  model: "claude-sonnet-4-5",
  modelName: "claude",
  providerName: "anthropic",
  apiKey: "sk-ant-test-key-123"
})
