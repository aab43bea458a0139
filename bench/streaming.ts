// The benchmark's streamed scenarios (see bench/run.ts): a client of Server-Sent Events
// streams that notes when the first text arrives, and the three measures taken with it.
import autocannon from "autocannon"
import { Pool } from "undici"
import { memoryOf, ticksOf } from "./processes.ts"

export interface StreamTarget {
  readonly name: string
  readonly url: string
  readonly path: string
  /** the request for the stream of 8 chunks sent at once */
  readonly fastBody: string
  /** the request for the stream of 64 chunks 5 ms apart */
  readonly pacedBody: string
  /** the server's process, whose CPU time and memory are measured */
  readonly pid?: number
}

/**
 * Whether one SSE event carries text: OpenAI's chunk (`choices[].delta.content`) or the
 * gateway's /inference chunk (`content[].text`), non-empty.
 */
const carriesText = (event: string): boolean => {
  const data = event.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trimStart()).join("\n")
  if (data === "" || data === "[DONE]") return false
  const chunk = JSON.parse(data) as {
    type?: string
    choices?: ReadonlyArray<{ delta?: { content?: unknown } }>
    content?: ReadonlyArray<{ text?: unknown }>
    delta?: unknown
  }
  const nonEmpty = (text: unknown) => typeof text === "string" && text !== ""
  // Anthropic's text_delta, the Responses API's output_text delta
  if (chunk.type === "content_block_delta") return nonEmpty((chunk.delta as { text?: unknown } | undefined)?.text)
  if (chunk.type === "response.output_text.delta") return nonEmpty(chunk.delta)
  return (chunk.choices ?? []).some((choice) => nonEmpty(choice.delta?.content)) || (chunk.content ?? []).some((block) => nonEmpty(block.text))
}

/** how each surface's stream ends: OpenAI's `[DONE]`, Anthropic's `message_stop`, the Responses API's `response.completed` */
const endMarkers = ["data: [DONE]", `"type":"message_stop"}`, "event: response.completed"]
const endsWell = (tail: string): boolean => {
  const last = tail.trimEnd()
  const lastEvent = last.slice(last.lastIndexOf("\n\n") + 2)
  return endMarkers.some((marker) => lastEvent.includes(marker))
}

/**
 * One streamed request read to its end: ms from sending it to the arrival of the first
 * `data:` event carrying text, and to the end. Fails unless the answer is a 200 stream with
 * text that ends as its surface ends a stream (`endMarkers`).
 */
export const streamOnce = async (pool: Pool, target: StreamTarget, body: string): Promise<{ firstText: number; total: number }> => {
  const started = process.hrtime.bigint()
  const since = () => Number(process.hrtime.bigint() - started) / 1e6
  const response = await pool.request({ path: target.path, method: "POST", headers: { "content-type": "application/json" }, body })
  if (response.statusCode !== 200) throw new Error(`${target.name} answered ${response.statusCode}: ${await response.body.text()}`)
  let firstText = -1
  let pending = "" // the events not yet looked at, until the first text
  let tail = "" // the last bytes, for the end marker (the Responses API's last event holds the whole response)
  for await (const part of response.body) {
    const arrived = since()
    const text = (part as Buffer).toString()
    tail = (tail + text).slice(-8192)
    if (firstText >= 0) continue
    pending += text.replaceAll("\r\n", "\n")
    for (let end = pending.indexOf("\n\n"); end >= 0 && firstText < 0; end = pending.indexOf("\n\n")) {
      if (carriesText(pending.slice(0, end))) firstText = arrived
      pending = pending.slice(end + 2)
    }
  }
  if (firstText < 0) throw new Error(`${target.name}: no text in the stream`)
  if (!endsWell(tail)) throw new Error(`${target.name}: the stream does not end as its surface ends one: ${JSON.stringify(tail)}`)
  return { firstText, total: since() }
}

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]

/**
 * Time to the first text chunk p50 and p99 of each target over the paced stream, at
 * concurrency 1, in `rounds` in which the targets take turns.
 */
export const measureFirstText = async (targets: ReadonlyArray<StreamTarget>, count: number, rounds: number) => {
  const samples: Array<Array<number>> = targets.map(() => [])
  const perRound = Math.ceil(count / rounds)
  for (let round = 0; round < rounds; round++) {
    for (const [index, target] of targets.entries()) {
      const pool = new Pool(target.url, { connections: 1 })
      for (let i = 0; i < (round === 0 ? 10 : 2); i++) await streamOnce(pool, target, target.pacedBody)
      for (let i = 0; i < perRound; i++) samples[index].push((await streamOnce(pool, target, target.pacedBody)).firstText)
      await pool.close()
    }
  }
  return samples.map((firstTexts) => {
    firstTexts.sort((a, b) => a - b)
    return { p50: percentile(firstTexts, 0.5), p99: percentile(firstTexts, 0.99) }
  })
}

export interface StreamedThroughput {
  readonly rps: number
  /** CPU microseconds per streamed request of the server process */
  readonly serverCpuUs: number
}

/** streamed requests per second over the stream of 8 chunks at once, as the plain case (autocannon) */
export const measureStreamedThroughput = async (target: StreamTarget, connections: number, duration: number): Promise<StreamedThroughput> => {
  const pool = new Pool(target.url, { connections: 1 })
  await streamOnce(pool, target, target.fastBody) // fails unless the target streams
  await pool.close()
  const run = (seconds: number) =>
    autocannon({ url: target.url + target.path, method: "POST", headers: { "content-type": "application/json" }, body: target.fastBody, connections, duration: seconds })
  await run(2) // warm-up
  const before = target.pid === undefined ? 0 : ticksOf(target.pid)
  const result = await run(duration)
  const serverCpuUs = target.pid === undefined ? 0 : ((ticksOf(target.pid) - before) * 10_000) / result.requests.total
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${target.name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`)
  return { rps: result.requests.average, serverCpuUs }
}

export interface OpenStreams {
  readonly completed: number
  /** CPU microseconds per stream completed of the server process */
  readonly serverCpuUs: number
  /** the highest resident memory of the server sampled during the run, bytes */
  readonly peakRss: number
  /** CPU microseconds per stream of the upstream's process and of this client, to tell whether they were the limit */
  readonly upstreamCpuUs: number
  readonly clientCpuUs: number
  /** the median time a stream took from request to end, ms (its pace alone: about 320 ms) */
  readonly streamP50: number
}

/**
 * `streams` paced streams held open at once for `duration` seconds (each connection starts
 * the next stream when one ends; the streams running at the end are read to their end):
 * the server's CPU per stream completed and its peak RSS, sampled every 20 ms.
 */
export const measureOpenStreams = async (target: StreamTarget, streams: number, duration: number, upstreamPid: number): Promise<OpenStreams> => {
  const pool = new Pool(target.url, { connections: streams, keepAliveTimeout: 60_000 })
  const all = (run: () => Promise<void>) => Promise.all(Array.from({ length: streams }, run))
  await all(async () => void await streamOnce(pool, target, target.pacedBody)) // warm-up: opens the connections
  let peakRss = 0
  const sample = () => {
    if (target.pid !== undefined) peakRss = Math.max(peakRss, memoryOf(target.pid, "VmRSS"))
  }
  const sampler = setInterval(sample, 20)
  const before = target.pid === undefined ? 0 : ticksOf(target.pid)
  const upstreamBefore = ticksOf(upstreamPid)
  const clientBefore = process.cpuUsage()
  const deadline = Date.now() + duration * 1000
  const totals: Array<number> = []
  await all(async () => {
    while (Date.now() < deadline) totals.push((await streamOnce(pool, target, target.pacedBody)).total)
  })
  const completed = totals.length
  clearInterval(sampler)
  sample()
  const serverCpuUs = target.pid === undefined ? 0 : ((ticksOf(target.pid) - before) * 10_000) / completed
  const upstreamCpuUs = ((ticksOf(upstreamPid) - upstreamBefore) * 10_000) / completed
  const client = process.cpuUsage(clientBefore)
  await pool.close()
  return { completed, serverCpuUs, peakRss, upstreamCpuUs, clientCpuUs: (client.user + client.system) / completed, streamP50: percentile(totals.sort((a, b) => a - b), 0.5) }
}
