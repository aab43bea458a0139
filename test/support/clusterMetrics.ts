/**
 * A small cluster for test/unit/metrics-cluster.test.ts: the primary installs the metrics
 * aggregator and forks two workers; each counts `gateway_test_total` (worker 1 once, worker 2
 * twice, with a histogram observation each); worker 1 then scrapes through the primary and
 * prints what it got on stdout, and everything exits.
 */
import cluster from "node:cluster"
import { Registry } from "prom-client"
import { installMetricsAggregator, workerScrape } from "../../layers/metrics/cluster.ts"
import { CounterFamily, HistogramFamily, register } from "../../layers/metrics/families.ts"

if (cluster.isPrimary) {
  installMetricsAggregator()
  const ready = new Set<number>()
  for (let i = 1; i <= 2; i++) {
    const worker = cluster.fork({ TEST_WORKER: String(i) })
    worker.on("message", (message: { counted?: number; scraped?: string }) => {
      if (message.counted !== undefined) {
        ready.add(message.counted)
        // both have counted: the first scrapes
        if (ready.size === 2) for (const each of Object.values(cluster.workers ?? {})) each?.send({ go: true })
      }
      if (message.scraped !== undefined) {
        process.stdout.write(message.scraped)
        for (const each of Object.values(cluster.workers ?? {})) each?.kill()
      }
    })
  }
} else {
  const id = Number(process.env.TEST_WORKER)
  const registry = new Registry()
  const counter = new CounterFamily("gateway_test_total", "a test counter", ["route"])
  const histogram = new HistogramFamily("gateway_test_seconds", "a test histogram", ["route"], [0.1, 1])
  register(registry, [counter, histogram])
  const scrape = workerScrape(registry)
  counter.inc(["/x"], id)
  histogram.observe(["/x"], id === 1 ? 0.05 : 0.5)
  process.on("message", (message: { go?: boolean }) => {
    if (message.go !== true || id !== 1) return
    scrape().then((text) => process.send!({ scraped: text }))
  })
  process.send!({ counted: id })
}
