/** `GET /anthropic/v1/models`' list (src/anthropicMessages/models.ts): its ids and its pages, as Anthropic's model list pages them. */
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import { listedModel, modelIds, modelPage } from "../../src/anthropicMessages/models.ts"

const ids = modelIds(["claude", "gpt"], ["chat"])
const page = (paging: Parameters<typeof modelPage>[1]) => {
  const result = modelPage(ids, paging)
  if (Result.isFailure(result)) throw new Error(result.failure.message)
  return { ids: result.success.data.map((model) => model.id), has_more: result.success.has_more, first_id: result.success.first_id, last_id: result.success.last_id }
}

describe("the Anthropic surface's model list", () => {
  it("lists models by bare and prefixed name, then functions", () => {
    expect(ids).toEqual(["claude", "gpt", "gateway::model_name::claude", "gateway::model_name::gpt", "gateway::function_name::chat"])
    expect(listedModel(ids, "gpt")).toEqual({ type: "model", id: "gpt", display_name: "gpt", created_at: "1970-01-01T00:00:00Z" })
    expect(listedModel(ids, "claude-x")).toBeUndefined()
  })

  it("pages forward from after_id and backward from before_id, saying whether more are that way", () => {
    expect(page({ limit: 2 })).toEqual({ ids: ["claude", "gpt"], has_more: true, first_id: "claude", last_id: "gpt" })
    expect(page({ limit: 2, afterId: "gpt" })).toEqual({
      ids: ["gateway::model_name::claude", "gateway::model_name::gpt"],
      has_more: true,
      first_id: "gateway::model_name::claude",
      last_id: "gateway::model_name::gpt"
    })
    expect(page({ limit: 20, afterId: "gateway::model_name::gpt" })).toMatchObject({ ids: ["gateway::function_name::chat"], has_more: false })
    expect(page({ limit: 2, beforeId: "gateway::model_name::gpt" })).toMatchObject({ ids: ["gpt", "gateway::model_name::claude"], has_more: true })
    expect(page({ limit: 5, beforeId: "gpt" })).toMatchObject({ ids: ["claude"], has_more: false })
    expect(page({ limit: 5, afterId: "gateway::function_name::chat" })).toEqual({ ids: [], has_more: false, first_id: null, last_id: null })
  })

  it("refuses a cursor that names no listed model, naming the parameter", () => {
    const result = modelPage(ids, { limit: 5, afterId: "nope" })
    expect(Result.isFailure(result) && result.failure.message).toBe('after_id: "nope" is not a model this gateway lists')
  })
})
