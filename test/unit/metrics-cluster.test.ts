/**
 * `/metrics` across workers (layers/metrics/cluster.ts): in a real cluster of two forked
 * workers, a worker's scrape asks the primary, which sums every worker's counters and
 * histogram buckets; what an exited worker had reported stays in the sums (a worker killed
 * and replaced: test/integration/hardening-metrics.test.ts).
 */
import { execFile } from "node:child_process"
import * as path from "node:path"
import { promisify } from "node:util"
import { expect, it } from "vitest"
import { foldReport } from "../../layers/metrics/cluster.ts"
import { repoRoot } from "../support/gateway.ts"

it("a worker's scrape is the sum over every worker, gathered by the primary", async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(repoRoot, "test/support/clusterMetrics.ts")], {
    timeout: 20_000
  })
  expect(stdout).toContain("# TYPE gateway_test_total counter")
  expect(stdout).toContain(`gateway_test_total{route="/x"} 3`)
  expect(stdout).toContain(`gateway_test_seconds_bucket{route="/x",le="0.1"} 1`)
  expect(stdout).toContain(`gateway_test_seconds_bucket{route="/x",le="1"} 2`)
  expect(stdout).toContain(`gateway_test_seconds_count{route="/x"} 2`)
})

it("folds an exited worker's report into the retired total: counters and histogram series summed by name and labels, gauges left out", () => {
  const counter = (values: Array<{ value: number; labels: Record<string, string> }>) => ({ name: "c_total", help: "c", type: "counter", aggregator: "sum", values })
  const histogram = (count: number, sum: number) => ({
    name: "h_seconds",
    help: "h",
    type: "histogram",
    aggregator: "sum",
    values: [
      { metricName: "h_seconds_bucket", labels: { route: "/x", le: 1 }, value: count },
      { metricName: "h_seconds_bucket", labels: { route: "/x", le: "+Inf" }, value: count },
      { metricName: "h_seconds_sum", labels: { route: "/x" }, value: sum },
      { metricName: "h_seconds_count", labels: { route: "/x" }, value: count }
    ]
  })
  const gauge = { name: "g", help: "g", type: "gauge", aggregator: "sum", values: [{ value: 7, labels: {} }] }
  const first = foldReport([], [counter([{ value: 2, labels: { a: "1", b: "2" } }]), histogram(1, 0.5), gauge])
  // labels in another order are the same series; a new label set is a new one
  const second = foldReport(first, [counter([{ value: 3, labels: { b: "2", a: "1" } }, { value: 1, labels: { a: "9", b: "2" } }]), histogram(2, 1.5), gauge])
  expect(second.find((metric) => metric.name === "g")).toBeUndefined()
  expect(second.find((metric) => metric.name === "c_total")!.values.map((sample) => sample.value)).toEqual([5, 1])
  expect(second.find((metric) => metric.name === "h_seconds")!.values.map((sample) => [sample.metricName, sample.value])).toEqual([
    ["h_seconds_bucket", 3],
    ["h_seconds_bucket", 3],
    ["h_seconds_sum", 2],
    ["h_seconds_count", 3]
  ])
})
