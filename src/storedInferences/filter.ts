/**
 * The filters of the API (`InferenceFilter`, `DatapointFilter`) as the stores take them:
 * checked, times parsed, and metrics looked up in the configuration. One walk of the and/or/not
 * tree serves both; each kind of filter only says how its leaves are checked.
 */
import * as Result from "effect/Result"
import type { DatapointFilter, FilterTreeJson, InferenceFilter, InferenceFilterLeaf, TagFilterJson, TimeFilterJson } from "../api/inferences.ts"
import type { MetricConfig } from "../config/types.ts"
import type { DatapointFilter as DatapointStoreFilter } from "../datasets/store.ts"
import { InvalidRequest } from "../errors.ts"
import { parseRfc3339 } from "../time.ts"
import type { DemonstrationFilter, FilterTree, MetricFilter, StoreFilter, TagFilter, TimeFilter } from "./store.ts"

// Postgres refuses a NUL in any text, and no stored name or tag holds one: a client mistake, not a database failure
export const holdsNul = "holds a NUL character (\\u0000), which no stored value can contain"

const invalid = (message: string): Result.Result<never, InvalidRequest> => Result.fail(new InvalidRequest({ message }))

/** The tree of `filter`, each leaf converted by `leaf` (given its path); the first problem otherwise. */
const toTree = <In extends { readonly type: string }, Out>(
  filter: FilterTreeJson<In>,
  path: string,
  leaf: (filter: In, path: string) => Result.Result<Out, InvalidRequest>
): Result.Result<FilterTree<Out>, InvalidRequest> => {
  switch (filter.type) {
    case "and":
    case "or": {
      const branch = filter as { readonly type: "and" | "or"; readonly children: ReadonlyArray<FilterTreeJson<In>> }
      const children: Array<FilterTree<Out>> = []
      for (let i = 0; i < branch.children.length; i++) {
        const child = toTree(branch.children[i], `${path}.children[${i}]`, leaf)
        if (Result.isFailure(child)) return child
        children.push(child.success)
      }
      return Result.succeed({ type: branch.type, children })
    }
    case "not": {
      const child = toTree((filter as { readonly child: FilterTreeJson<In> }).child, `${path}.child`, leaf)
      return Result.map(child, (child): FilterTree<Out> => ({ type: "not", child }))
    }
    default:
      return leaf(filter as In, path)
  }
}

const tagLeaf = (filter: TagFilterJson, path: string): Result.Result<TagFilter, InvalidRequest> => {
  if (filter.key.includes("\0")) return invalid(`${path}.key: ${holdsNul}`)
  if (filter.value.includes("\0")) return invalid(`${path}.value: ${holdsNul}`)
  return Result.succeed({ type: "tag", key: filter.key, value: filter.value, comparison_operator: filter.comparison_operator ?? "=" })
}

const timeLeaf = (filter: TimeFilterJson, path: string): Result.Result<TimeFilter, InvalidRequest> => {
  const time = parseRfc3339(filter.time)
  if (time === undefined) return invalid(`${path}.time: expected an RFC 3339 time such as 2026-01-31T12:00:00Z, got "${filter.time}"`)
  return Result.succeed({ type: "time", time, comparison_operator: filter.comparison_operator })
}

const metricLeaf = (
  filter: Extract<InferenceFilterLeaf, { readonly metric_name: string }>,
  path: string,
  metrics: ReadonlyMap<string, MetricConfig>
): Result.Result<MetricFilter, InvalidRequest> => {
  const name = JSON.stringify(filter.metric_name)
  const metric = metrics.get(filter.metric_name)
  if (metric === undefined) return invalid(`${path}.metric_name: unknown metric ${name}`)
  const asked = filter.type === "boolean_metric" ? "boolean" : "float"
  if (metric.type !== asked) return invalid(`${path}.type: metric ${name} is a ${metric.type} metric: filter on it with "${metric.type}_metric"`)
  return Result.succeed(
    filter.type === "boolean_metric"
      ? { type: "boolean_metric", metricName: metric.name, level: metric.level, value: filter.value }
      : { type: "float_metric", metricName: metric.name, level: metric.level, value: filter.value, comparison_operator: filter.comparison_operator }
  )
}

/**
 * API filter -> inference store filter, at `path` (named in problems); `metrics` (the
 * configuration's) say which metrics exist, their type and their level.
 */
export const toStoreFilter = (
  filter: InferenceFilter,
  path: string,
  metrics: ReadonlyMap<string, MetricConfig>
): Result.Result<StoreFilter, InvalidRequest> =>
  toTree<InferenceFilterLeaf, TagFilter | TimeFilter | MetricFilter | DemonstrationFilter>(filter, path, (leaf, at) => {
    switch (leaf.type) {
      case "tag":
        return tagLeaf(leaf, at)
      case "time":
        return timeLeaf(leaf, at)
      case "boolean_metric":
      case "float_metric":
        return metricLeaf(leaf, at, metrics)
      case "demonstration":
        return Result.succeed({ type: "demonstration" })
    }
  })

/** API filter -> dataset store filter, at `path` (named in problems) */
export const toDatapointStoreFilter = (filter: DatapointFilter, path: string): Result.Result<DatapointStoreFilter, InvalidRequest> =>
  toTree<TagFilterJson | TimeFilterJson, TagFilter | TimeFilter>(filter, path, (leaf, at) =>
    leaf.type === "tag" ? tagLeaf(leaf, at) : timeLeaf(leaf, at))
