/**
 * The reload that would remove everything (issue 33, finding 7): a configuration that defines no
 * function and no model (nor embedding model) while the one serving defines some is refused
 * unless forced; the built-in `gateway::` functions every configuration has do not count.
 */
import { describe, expect, it } from "vitest"
import { removesEverything } from "../../src/config/reload.ts"
import { buildOk } from "./fixtures.ts"

const empty = buildOk("")
const oneFunction = buildOk(`
[functions.chat]
type = "chat"
[functions.chat.variants.only]
type = "chat_completion"
model = "dummy::hello"
`)
const oneModel = buildOk(`
[models.m]
routing = ["a"]
[models.m.providers.a]
type = "dummy"
model_name = "echo_request_messages"
`)
const oneEmbeddingModel = buildOk(`
[embedding_models.e]
routing = ["a"]
[embedding_models.e.providers.a]
type = "openai"
model_name = "text-embedding-3-small"
api_key_location = "none"
`)

describe("removesEverything", () => {
  it("refuses an empty configuration after one that defines a function, a model or an embedding model, and says what the serving one defines", () => {
    expect(empty.functions.size).toBeGreaterThan(0) // the built-ins
    expect(removesEverything(oneFunction, empty)).toMatch(/^the reloaded configuration defines no functions and no models, while the one serving defines 1 function and 0 models: an empty or truncated file\?/)
    expect(removesEverything(oneModel, empty)).toMatch(/defines 0 functions and 1 model:/)
    expect(removesEverything(oneEmbeddingModel, empty)).toMatch(/defines 0 functions and 1 model:/)
  })

  it("lets through a configuration that keeps anything, and an empty one after an empty one", () => {
    expect(removesEverything(oneFunction, oneModel)).toBeUndefined()
    expect(removesEverything(oneModel, oneEmbeddingModel)).toBeUndefined()
    expect(removesEverything(empty, oneFunction)).toBeUndefined()
    expect(removesEverything(empty, empty)).toBeUndefined()
  })
})
