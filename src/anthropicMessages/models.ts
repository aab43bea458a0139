/**
 * `GET /anthropic/v1/models` (issue 37): the `model` values this gateway answers to, as
 * Anthropic's model list pages them. A configured model is listed by its bare name (what
 * Anthropic's clients send) and by `gateway::model_name::<name>`; a function by
 * `gateway::function_name::<name>`.
 */
import * as Result from "effect/Result"
import type { AnthropicModel, AnthropicModelList } from "../api/anthropicMessages.ts"
import { functionModelPrefix, modelModelPrefix } from "../api/modelField.ts"
import { InvalidRequest } from "../errors.ts"
import { quoted } from "../untrusted.ts"

/** the gateway does not know when a model was released: the epoch, in Anthropic's RFC 3339 form */
const unknownDate = "1970-01-01T00:00:00Z"

const modelOf = (id: string): AnthropicModel => ({ type: "model", id, display_name: id, created_at: unknownDate })

/** every id the list holds, in its order: models by bare name, then by prefixed name, then functions */
export const modelIds = (models: Iterable<string>, functions: Iterable<string>): ReadonlyArray<string> => {
  const names = [...models]
  return [...names, ...names.map((name) => `${modelModelPrefix}${name}`), ...[...functions].map((name) => `${functionModelPrefix}${name}`)]
}

/** one listed model, or undefined when the gateway does not answer to `id` */
export const listedModel = (ids: ReadonlyArray<string>, id: string): AnthropicModel | undefined => (ids.includes(id) ? modelOf(id) : undefined)

export interface ModelPaging {
  readonly limit: number
  readonly afterId?: string | undefined
  readonly beforeId?: string | undefined
}

/** the page `paging` asks for: `limit` ids after `afterId`, or the last `limit` before `beforeId`, or the first `limit` */
export const modelPage = (ids: ReadonlyArray<string>, paging: ModelPaging): Result.Result<typeof AnthropicModelList.Type, InvalidRequest> =>
  Result.gen(function*() {
    const indexOf = (id: string, field: string): Result.Result<number, InvalidRequest> => {
      const index = ids.indexOf(id)
      return index < 0 ? Result.fail(new InvalidRequest({ message: `${field}: ${quoted(id)} is not a model this gateway lists` })) : Result.succeed(index)
    }
    let start = 0
    let end = Math.min(ids.length, paging.limit)
    if (paging.afterId !== undefined) {
      start = (yield* indexOf(paging.afterId, "after_id")) + 1
      end = Math.min(ids.length, start + paging.limit)
    } else if (paging.beforeId !== undefined) {
      end = yield* indexOf(paging.beforeId, "before_id")
      start = Math.max(0, end - paging.limit)
    }
    const page = ids.slice(start, end)
    return {
      data: page.map(modelOf),
      // Anthropic's has_more: whether there are more in the direction the page was read
      has_more: paging.beforeId !== undefined ? start > 0 : end < ids.length,
      first_id: page[0] ?? null,
      last_id: page[page.length - 1] ?? null
    }
  })
