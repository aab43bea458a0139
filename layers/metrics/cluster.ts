/**
 * `/metrics` over every worker (`[gateway] workers`): the primary holds no metrics of its own;
 * a worker asked for `/metrics` asks the primary over the cluster's IPC channel, the primary
 * asks every worker for its registry (prom-client's `getMetricsAsJSON`), sums counters, gauges
 * and histogram buckets (`AggregatorRegistry.aggregate`) and answers with the text.
 *
 * A sum must never go backwards (Prometheus reads a smaller counter as a reset): the primary
 * keeps each worker's last report, and when a worker exits it folds that report's counters and
 * histograms (not its gauges, which describe a process that is gone) into one `retired` total
 * added to every later sum. What a worker counted after its last report is lost with it, so a
 * dead worker's figures are those of the last scrape before it died. A worker that does not
 * answer in time counts with its last report, so a hung worker neither fails the scrape nor
 * takes its counts out of it; a worker still starting (it has counted nothing) is not waited
 * for. Memory: one report per live worker and one retired total.
 */
import cluster, { type Worker } from "node:cluster"
import { AggregatorRegistry, type Registry } from "prom-client"

const scrapeRequest = "gateway:metrics-scrape"
const scrapeAnswer = "gateway:metrics-text"
const reportRequest = "gateway:metrics-report-request"
const reportAnswer = "gateway:metrics-report"
/** a worker tells the primary it answers report requests (a worker still starting is not asked) */
const reportsReady = "gateway:metrics-ready"

/** how long the primary waits for the workers' reports before it answers with the last ones */
const reportTimeoutMs = 5_000

interface ScrapeRequest {
  readonly type: typeof scrapeRequest
  readonly id: number
}

interface ScrapeAnswer {
  readonly type: typeof scrapeAnswer
  readonly id: number
  readonly text?: string
  readonly error?: string
}

interface ReportsReady {
  readonly type: typeof reportsReady
}

interface ReportRequest {
  readonly type: typeof reportRequest
  readonly id: number
}

/** one sample of a reported metric (a histogram's carry their `metricName`: `<name>_bucket`, `_sum`, `_count`) */
interface ReportedSample {
  readonly value: number
  readonly labels: Readonly<Record<string, string | number>>
  readonly metricName?: string
}

/** one metric of a worker's registry, as `getMetricsAsJSON` gives it and `AggregatorRegistry.aggregate` sums it */
interface ReportedMetric {
  readonly name: string
  readonly help: string
  readonly type: string
  readonly aggregator: string
  readonly values: ReadonlyArray<ReportedSample>
}

type Report = ReadonlyArray<ReportedMetric>

interface ReportAnswer {
  readonly type: typeof reportAnswer
  readonly id: number
  readonly metrics?: Report
}

const isMessage = <T extends { readonly type: string }>(message: unknown, type: T["type"]): message is T =>
  typeof message === "object" && message !== null && (message as { type?: unknown }).type === type

const sampleKey = (sample: ReportedSample): string =>
  `${sample.metricName ?? ""}\u0000${JSON.stringify(Object.entries(sample.labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))}`

/** `total` plus the counters and histograms of `report`, summed series by series (gauges left out) */
export const foldReport = (total: Report, report: Report): Report => {
  const byName = new Map(total.map((metric) => [metric.name, metric]))
  for (const metric of report) {
    if (metric.type !== "counter" && metric.type !== "histogram") continue
    const values = new Map<string, ReportedSample>()
    for (const sample of byName.get(metric.name)?.values ?? []) values.set(sampleKey(sample), sample)
    for (const sample of metric.values) {
      const key = sampleKey(sample)
      const earlier = values.get(key)
      values.set(key, earlier === undefined ? sample : { ...earlier, value: earlier.value + sample.value })
    }
    byName.set(metric.name, { name: metric.name, help: metric.help, type: metric.type, aggregator: metric.aggregator, values: [...values.values()] })
  }
  return [...byName.values()]
}

/**
 * In the primary: answers each worker's scrape with the metrics of every worker, those that
 * exited included. Returns what uninstalls it.
 */
export const installMetricsAggregator = (): (() => void) => {
  /** the workers that answer report requests, by id */
  const ready = new Set<number>()
  /** each live worker's last report, by worker id */
  const reports = new Map<number, Report>()
  /** the counters and histograms of the workers that exited, summed */
  let retired: Report = []
  /** scrapes waiting for reports: the workers they wait for, and what completes them */
  const gathering = new Map<number, { readonly waitingFor: Set<number>; readonly done: () => void }>()
  let nextId = 0

  const answered = (requestId: number, workerId: number) => {
    const gather = gathering.get(requestId)
    if (gather === undefined) return
    gather.waitingFor.delete(workerId)
    if (gather.waitingFor.size === 0) gather.done()
  }

  /** asks every worker for its report, then sums the latest of each with the retired total */
  const gather = (): Promise<string> =>
    new Promise<void>((resolve) => {
      const id = nextId++
      const waitingFor = new Set<number>()
      const timer = setTimeout(() => done(), reportTimeoutMs)
      const done = () => {
        clearTimeout(timer)
        gathering.delete(id)
        resolve()
      }
      gathering.set(id, { waitingFor, done })
      for (const worker of Object.values(cluster.workers ?? {})) {
        if (worker === undefined || !worker.isConnected() || !ready.has(worker.id)) continue
        waitingFor.add(worker.id)
        worker.send({ type: reportRequest, id } satisfies ReportRequest)
      }
      if (waitingFor.size === 0) done()
    }).then(() => AggregatorRegistry.aggregate([...reports.values(), retired] as Array<object>).metrics())

  const onMessage = (worker: Worker, message: unknown) => {
    if (isMessage<ReportsReady>(message, reportsReady)) {
      ready.add(worker.id)
      return
    }
    if (isMessage<ReportAnswer>(message, reportAnswer)) {
      // a report that arrives after its worker exited is not counted again
      if (message.metrics !== undefined && cluster.workers?.[worker.id] === worker) reports.set(worker.id, message.metrics)
      answered(message.id, worker.id)
      return
    }
    if (!isMessage<ScrapeRequest>(message, scrapeRequest)) return
    gather().then(
      (text): ScrapeAnswer => ({ type: scrapeAnswer, id: message.id, text }),
      (error: Error): ScrapeAnswer => ({ type: scrapeAnswer, id: message.id, error: error.message })
    ).then((answer) => {
      if (worker.isConnected()) worker.send(answer)
    })
  }

  const onExit = (worker: Worker) => {
    ready.delete(worker.id)
    const last = reports.get(worker.id)
    if (last !== undefined) {
      retired = foldReport(retired, last)
      reports.delete(worker.id)
    }
    // scrapes waiting for it answer with what it last reported
    for (const requestId of [...gathering.keys()]) answered(requestId, worker.id)
  }

  cluster.on("message", onMessage)
  cluster.on("exit", onExit)
  return () => {
    cluster.off("message", onMessage)
    cluster.off("exit", onExit)
  }
}

/** how long a worker waits for the primary's answer (the primary waits `reportTimeoutMs` for the workers) */
const answerTimeoutMs = 10_000

/**
 * In a worker: reports `registry` to the primary when it asks, and gives the scrape of every
 * worker, asked of the primary.
 */
export const workerScrape = (registry: Registry): (() => Promise<string>) => {
  let nextId = 0
  const pending = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void }>()
  process.on("message", (message: unknown) => {
    if (isMessage<ReportRequest>(message, reportRequest)) {
      registry.getMetricsAsJSON().then(
        (metrics): ReportAnswer => ({ type: reportAnswer, id: message.id, metrics: metrics as unknown as Report }),
        // no report: the primary counts this worker with its last one
        (): ReportAnswer => ({ type: reportAnswer, id: message.id })
      ).then((answer) => process.send?.(answer))
      return
    }
    if (!isMessage<ScrapeAnswer>(message, scrapeAnswer)) return
    const waiting = pending.get(message.id)
    if (waiting === undefined) return
    pending.delete(message.id)
    if (message.text !== undefined) waiting.resolve(message.text)
    else waiting.reject(new Error(`the primary could not gather the workers' metrics: ${message.error}`))
  })
  process.send?.({ type: reportsReady } satisfies ReportsReady)
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = nextId++
      const timer = setTimeout(() => {
        pending.delete(id)
        reject(new Error(`the primary did not answer within ${answerTimeoutMs} ms`))
      }, answerTimeoutMs)
      pending.set(id, {
        resolve: (text) => {
          clearTimeout(timer)
          resolve(text)
        },
        reject: (error) => {
          clearTimeout(timer)
          reject(error)
        }
      })
      process.send!({ type: scrapeRequest, id } satisfies ScrapeRequest)
    })
}
