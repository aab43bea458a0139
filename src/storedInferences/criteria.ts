/**
 * Which stored inferences a listing is about (list_inferences, and datasets built from an
 * inference query): function, variant, episode and filters, checked, as the store takes them.
 */
import * as Result from "effect/Result"
import type { InferenceFilter } from "../api/inferences.ts"
import type { MetricConfig } from "../config/types.ts"
import { InvalidRequest } from "../errors.ts"
import { isUuidV7 } from "../inference/prepare.ts"
import { holdsNul, toStoreFilter } from "./filter.ts"
import type { InferenceQuery } from "./store.ts"

/** The criteria as the API names them. */
export interface InferenceCriteriaJson {
  readonly function_name?: string | undefined
  readonly variant_name?: string | undefined
  readonly episode_id?: string | undefined
  readonly filters?: InferenceFilter | undefined
}

export type InferenceCriteria = Pick<InferenceQuery, "functionName" | "variantName" | "episodeId" | "filter">

/** `request`'s criteria for the store, `metrics` (the configuration's) resolving metric filters; the first problem otherwise */
export const toInferenceCriteria = (
  request: InferenceCriteriaJson,
  metrics: ReadonlyMap<string, MetricConfig>
): Result.Result<InferenceCriteria, InvalidRequest> => {
  for (const field of ["function_name", "variant_name"] as const) {
    if (request[field]?.includes("\0")) return Result.fail(new InvalidRequest({ message: `${field}: ${holdsNul}` }))
  }
  if (request.episode_id !== undefined && !isUuidV7(request.episode_id)) {
    return Result.fail(new InvalidRequest({ message: `episode_id: "${request.episode_id}" is not an episode id (a UUIDv7)` }))
  }
  const filter = request.filters === undefined ? Result.succeed(undefined) : toStoreFilter(request.filters, "filters", metrics)
  return Result.map(filter, (filter) => ({ functionName: request.function_name, variantName: request.variant_name, episodeId: request.episode_id, filter }))
}
