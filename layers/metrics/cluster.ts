/**
 * `/metrics` over every worker (`[gateway] workers`): the primary holds no metrics of its own;
 * a worker asked for `/metrics` asks the primary over the cluster's IPC channel, the primary
 * asks every worker for its registry (prom-client's `AggregatorRegistry.clusterMetrics`: sums
 * of counters, gauges and histogram buckets) and answers with the text.
 */
import cluster, { type Worker } from "node:cluster"
import { AggregatorRegistry, type Registry } from "prom-client"

const scrapeRequest = "gateway:metrics-scrape"
const scrapeAnswer = "gateway:metrics-text"

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

const isMessage = <T extends { readonly type: string }>(message: unknown, type: T["type"]): message is T =>
  typeof message === "object" && message !== null && (message as { type?: unknown }).type === type

/**
 * In the primary: answers each worker's scrape with the metrics of every worker. Returns what
 * uninstalls it.
 */
export const installMetricsAggregator = (): (() => void) => {
  const aggregator = new AggregatorRegistry()
  const onMessage = (worker: Worker, message: unknown) => {
    if (!isMessage<ScrapeRequest>(message, scrapeRequest)) return
    aggregator.clusterMetrics().then(
      (text): ScrapeAnswer => ({ type: scrapeAnswer, id: message.id, text }),
      (error: Error): ScrapeAnswer => ({ type: scrapeAnswer, id: message.id, error: error.message })
    ).then((answer) => {
      if (worker.isConnected()) worker.send(answer)
    })
  }
  cluster.on("message", onMessage)
  return () => {
    cluster.off("message", onMessage)
  }
}

/** how long a worker waits for the primary's answer (the primary waits 5 s for the workers) */
const answerTimeoutMs = 10_000

/**
 * In a worker: lets the primary read `registry` (prom-client answers its requests), and gives
 * the scrape of every worker, asked of the primary.
 */
export const workerScrape = (registry: Registry): (() => Promise<string>) => {
  AggregatorRegistry.setRegistries([registry])
  // constructing one installs prom-client's listener for the primary's requests
  new AggregatorRegistry()
  let nextId = 0
  const pending = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void }>()
  process.on("message", (message: unknown) => {
    if (!isMessage<ScrapeAnswer>(message, scrapeAnswer)) return
    const waiting = pending.get(message.id)
    if (waiting === undefined) return
    pending.delete(message.id)
    if (message.text !== undefined) waiting.resolve(message.text)
    else waiting.reject(new Error(`the primary could not gather the workers' metrics: ${message.error}`))
  })
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
