// The CPU the metrics add to one inference, measured apart from the noise of a shared machine:
// what the hot path calls per answered request (the route's counter and histogram, the
// completed inference's series, the overhead's histogram, the two clock reads around a
// provider call), in a loop. Compare with the CPU per request of `npm run bench`.
// Usage: node bench/metricsCost.ts
import { makePrometheusMetrics } from "../layers/metrics/prometheus.ts"
import type { GatewayConfig } from "../src/config/types.ts"
import type { InferenceMeasures } from "../src/metrics/metrics.ts"
import { WriteQueue } from "../src/analytics/writeQueue.ts"

const config = { models: new Map([["pair", {}]]) } as unknown as GatewayConfig
const metrics = makePrometheusMetrics(config, WriteQueue.off)
const completed: InferenceMeasures = {
  functionName: "assistant",
  variantName: "main",
  modelName: "pair",
  providerName: "first",
  usage: { input_tokens: 11, output_tokens: 5 },
  cost: 0.0001,
  otherCalls: [],
  processingTimeMs: 3,
  cached: false,
  cacheRead: false
}

const perRequest = () => {
  const started = performance.now()
  const time = { ms: 0 }
  const providerStarted = performance.now()
  time.ms += performance.now() - providerStarted
  metrics.inferenceCompleted(completed)
  metrics.overhead("/inference", (performance.now() - started - time.ms) / 1000)
  metrics.requestServed("/inference", 200, (performance.now() - started) / 1000)
}

for (let i = 0; i < 200_000; i++) perRequest()
const rounds = 5
const n = 1_000_000
for (let round = 0; round < rounds; round++) {
  const cpu = process.cpuUsage()
  for (let i = 0; i < n; i++) perRequest()
  const used = process.cpuUsage(cpu)
  console.log(`round ${round + 1}: ${(((used.user + used.system) / n) * 1000).toFixed(0)} ns of CPU per request`)
}
