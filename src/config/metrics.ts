/** `[metrics.<name>]` -> the metrics feedback may target. */
import { type BuildContext, tableDecoder } from "./context.ts"
import { RawMetric } from "./raw.ts"
import type { MetricConfig } from "./types.ts"

const decodeMetric = tableDecoder(RawMetric)
const reservedMetricNames = new Set(["comment", "demonstration"])

export const buildMetrics = (context: BuildContext, tables: Readonly<Record<string, unknown>>): Map<string, MetricConfig> => {
  const metrics = new Map<string, MetricConfig>()
  for (const [name, table] of Object.entries(tables)) {
    const keyPath = ["metrics", name]
    if (reservedMetricNames.has(name)) {
      context.report(keyPath, `"${name}" is a reserved metric name and needs no configuration`)
      continue
    }
    const metric = context.decodeAt(decodeMetric, table, keyPath)
    if (metric === undefined) continue
    metrics.set(name, {
      name,
      type: metric.type,
      level: metric.level,
      optimize: metric.optimize ?? "max",
      ...(metric.description !== undefined && { description: metric.description })
    })
  }
  return metrics
}
