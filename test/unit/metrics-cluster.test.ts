/**
 * `/metrics` across workers (layers/metrics/cluster.ts): in a real cluster of two forked
 * workers, a worker's scrape asks the primary, which sums every worker's counters and
 * histogram buckets.
 */
import { execFile } from "node:child_process"
import * as path from "node:path"
import { promisify } from "node:util"
import { expect, it } from "vitest"
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
