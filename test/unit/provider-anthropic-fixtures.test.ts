/**
 * The `anthropic` codec replayed on its recorded fixtures (`src/providers/anthropic/fixtures/`),
 * and `gcp_vertex_anthropic`'s token counts (`counts/vertex-*`), without its authorizer (its
 * tokens are tested apart).
 */
import { anthropicCodec } from "../../src/providers/anthropic/index.ts"
import { vertexAnthropicCodec } from "../../src/providers/anthropic/vertex.ts"
import { fixtureSuite } from "../support/codecFixtureSuite.ts"

const vertex = (name: string) => name.startsWith("vertex-")

fixtureSuite("anthropic", anthropicCodec, {
  settings: {},
  model: "claude-sonnet-4-5",
  modelName: "claude",
  providerName: "anthropic",
  apiKey: "sk-ant-test-key-123",
  only: (name) => !vertex(name)
})

fixtureSuite("anthropic", { ...vertexAnthropicCodec, authorizer: undefined }, {
  label: "anthropic (gcp_vertex_anthropic)",
  kinds: ["counts"],
  only: vertex,
  settings: { location: "us-east5", project_id: "my-project" }
})
