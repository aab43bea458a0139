/**
 * `/metrics` with workers never goes backwards (issue 33): the sums over the workers keep what a
 * worker that died had reported, so that Prometheus sees no counter reset when a worker is
 * killed and replaced. Real processes: two workers, traffic, a scrape, `kill -9` of one worker,
 * its replacement, and scrapes again.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, dummyInference, pollUntil } from "../support/access.ts"
import { rawRequest, type RunningGateway, startGateway } from "../support/gateway.ts"

const listeningLines = (gateway: RunningGateway) => gateway.log().match(/Listening on http/g)?.length ?? 0

/** which worker answers `GET /status` over a fresh connection */
const statusWorker = async (gateway: RunningGateway): Promise<number> => JSON.parse((await rawRequest(gateway.url + "/status")).text).worker

/** the workers seen answering over fresh connections, until `count` distinct ones are seen */
const workersAnswering = async (gateway: RunningGateway, count: number): Promise<Set<number>> => {
  const seen = new Set<number>()
  for (let attempt = 0; attempt < 400 && seen.size < count; attempt++) seen.add(await statusWorker(gateway))
  return seen
}

/** every sample of the counter and histogram families of a scrape: series (name and labels) -> value */
const monotonicSamples = async (gateway: RunningGateway): Promise<Map<string, number>> => {
  const scrape = await rawRequest(gateway.url + "/metrics")
  expect(scrape.status).toBe(200)
  const lines = scrape.text.split("\n")
  const families = new Set(
    lines.flatMap((line) => {
      const type = /^# TYPE (\S+) (counter|histogram)$/.exec(line)
      return type === null ? [] : [type[1]]
    })
  )
  const samples = new Map<string, number>()
  for (const line of lines) {
    if (line.startsWith("#") || line === "") continue
    const series = line.slice(0, line.lastIndexOf(" "))
    const name = series.split("{")[0]
    if (families.has(name) || families.has(name.replace(/_(bucket|sum|count)$/, ""))) samples.set(series, Number(line.slice(line.lastIndexOf(" ") + 1)))
  }
  return samples
}

const inferencesCounted = (samples: Map<string, number>) => samples.get(`gateway_http_requests_total{route="/inference",status="200"}`) ?? 0

describe("/metrics when a worker dies", () => {
  let gateway: RunningGateway
  beforeAll(async () => {
    gateway = await startGateway({ args: ["--config-file", "config.toml", "--workers", "2"] })
    await pollUntil(async () => listeningLines(gateway), (lines) => lines >= 2, 20_000)
  })
  afterAll(async () => {
    await gateway?.stop()
  })

  it("keeps every counter and histogram series at least where it was after a worker is killed and replaced", async () => {
    // traffic spread over both workers by the kernel (fresh connections): inferences, 404s, 400s
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        rawRequest(gateway.url + (i % 5 === 4 ? "/nowhere" : "/inference"), {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(i % 5 === 3 ? { input: {} } : dummyInference())
        })
      )
    )
    expect(answers.map((answer) => answer.status).sort()).toEqual([...Array(18).fill(200), ...Array(6).fill(400), ...Array(6).fill(404)])
    const workers = await workersAnswering(gateway, 2)
    expect(workers.size).toBe(2)

    const before = await monotonicSamples(gateway)
    expect(inferencesCounted(before)).toBe(18)

    const [victim] = [...workers]
    const listened = listeningLines(gateway)
    process.kill(victim, "SIGKILL")
    await pollUntil(async () => gateway.log(), (log) => log.includes(`(pid ${victim}) killed by SIGKILL`), 10_000)
    await pollUntil(async () => listeningLines(gateway), (lines) => lines > listened, 20_000)

    // scrapes answered by either worker (the survivor and the replacement): nothing went down
    for (let scrape = 0; scrape < 6; scrape++) {
      const after = await monotonicSamples(gateway)
      for (const [series, value] of before) expect(after.get(series), series).toBeGreaterThanOrEqual(value)
      // the dead worker's inferences are still counted, and none more were made
      expect(inferencesCounted(after)).toBe(18)
    }

    // and counting goes on from there, over the survivor and the replacement
    const more = await Promise.all(Array.from({ length: 4 }, () => call(gateway, "POST", "/inference", { body: dummyInference() })))
    expect(more.map((answer) => answer.status)).toEqual([200, 200, 200, 200])
    expect(inferencesCounted(await monotonicSamples(gateway))).toBe(22)
  })
})
