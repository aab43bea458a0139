// Loaded into the gateway's process by the soak (`node --import bench/soakProbe.ts --expose-gc`):
// measures the event loop's delay with perf_hooks and writes it, with the RSS, to the file
// named by GATEWAY_SOAK_PROBE_FILE every 200 ms. SIGUSR2 collects garbage and, once the pause
// that made is behind, starts a new measuring period (the soak reads the file, then sends it,
// after its warm-up and after the load).
import * as fs from "node:fs"
import { monitorEventLoopDelay } from "node:perf_hooks"
import * as v8 from "node:v8"

const file = process.env.GATEWAY_SOAK_PROBE_FILE
if (file !== undefined) {
  const delay = monitorEventLoopDelay({ resolution: 10 })
  delay.enable()
  let peakRss = process.memoryUsage.rss()
  const write = () => {
    const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage()
    peakRss = Math.max(peakRss, rss)
    fs.writeFileSync(file, JSON.stringify({
      maxDelayMs: delay.max / 1e6,
      p99DelayMs: delay.percentile(99) / 1e6,
      rss,
      peakRss,
      heapUsed,
      heapTotal,
      external,
      arrayBuffers,
      v8PhysicalHeap: v8.getHeapStatistics().total_physical_size,
      v8Malloced: v8.getHeapStatistics().malloced_memory,
      at: Date.now()
    }))
  }
  setInterval(write, 200).unref()
  process.on("SIGUSR2", () => {
    // a last-resort collection also gives back the pages V8 keeps for reuse
    ;(globalThis as { gc?: (options?: object) => void }).gc?.({ type: "major", execution: "sync", flavor: "last-resort" })
    setTimeout(() => {
      delay.reset()
      peakRss = process.memoryUsage.rss()
      write()
    }, 100)
  })
}
