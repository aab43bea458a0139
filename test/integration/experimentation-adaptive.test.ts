/**
 * Adaptive experimentation over real HTTP with dummy models, on ClickHouse and on Postgres
 * (there with durable tasks on the same database, so computations run under the shared lock):
 * feedback favouring one variant moves `GET /v1/experimentation/{fn}`'s probabilities to it
 * (an inference-level boolean metric to maximize, an episode-level float metric to minimize),
 * with `min_prob` kept for the other; new episodes are then drawn accordingly (checked
 * statistically); a second gateway on the same database reports the same probabilities and
 * gives an episode the variant the first gave it; pinning wins. Static experiments and plain
 * weights answer their normalized weights; an unknown function is a 404; without
 * observability an adaptive function draws uniformly and the log says why.
 */
import * as Schema from "effect/Schema"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ExperimentationResponse } from "../../src/api/experimentation.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { backends, observabilityToml, poll } from "../support/observability.ts"

const hello = { messages: [{ role: "user", content: "Hello" }] }

const functions = `
[metrics.thumbs_up]
type = "boolean"
level = "inference"
optimize = "max"

[metrics.seconds_spent]
type = "float"
level = "episode"
optimize = "min"

[functions.pick]
type = "chat"
[functions.pick.variants.good]
type = "chat_completion"
model = "dummy::hello"
[functions.pick.variants.poor]
type = "chat_completion"
model = "dummy::hello"
[functions.pick.variants.spare]
type = "chat_completion"
model = "dummy::hello"
[functions.pick.experimentation]
type = "adaptive"
candidate_variants = ["good", "poor"]
fallback_variants = ["spare"]
metric = "thumbs_up"
min_prob = 0.1
min_samples_per_variant = 5
update_period_s = 1

[functions.flow]
type = "chat"
[functions.flow.variants.fast]
type = "chat_completion"
model = "dummy::hello"
[functions.flow.variants.slow]
type = "chat_completion"
model = "dummy::hello"
[functions.flow.experimentation]
type = "track_and_stop"
candidate_variants = ["slow", "fast"]
metric = "seconds_spent"
min_prob = 0.05
min_samples_per_variant = 5
update_period_s = 1

[functions.fixed]
type = "chat"
[functions.fixed.variants.a]
type = "chat_completion"
model = "dummy::hello"
[functions.fixed.variants.b]
type = "chat_completion"
model = "dummy::hello"
[functions.fixed.experimentation]
type = "static"
candidate_variants = { a = 3, b = 1 }
fallback_variants = []

[functions.weighted]
type = "chat"
[functions.weighted.variants.heavy]
type = "chat_completion"
model = "dummy::hello"
weight = 4
[functions.weighted.variants.light]
type = "chat_completion"
model = "dummy::hello"
weight = 1
[functions.weighted.variants.off]
type = "chat_completion"
model = "dummy::hello"
weight = 0
`

const count = (values: ReadonlyArray<string>, value: string) => values.filter((v) => v === value).length

/** inferences of `functionName`, a few at a time: each answer's variant and ids */
const infer = async (gateway: RunningGateway, functionName: string, n: number, episodeIds?: ReadonlyArray<string>) => {
  const answers: Array<{ variant: string; inferenceId: string; episodeId: string }> = []
  for (let start = 0; start < n; start += 25) {
    const responses = await Promise.all(Array.from({ length: Math.min(25, n - start) }, (_, i) =>
      gateway.post("/inference", {
        function_name: functionName,
        input: hello,
        ...(episodeIds !== undefined && { episode_id: episodeIds[start + i] })
      })))
    for (const response of responses) {
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      answers.push({ variant: response.body.variant_name, inferenceId: response.body.inference_id, episodeId: response.body.episode_id })
    }
  }
  return answers
}

const sendFeedback = async (gateway: RunningGateway, bodies: ReadonlyArray<Record<string, unknown>>) => {
  for (let start = 0; start < bodies.length; start += 25) {
    const responses = await Promise.all(bodies.slice(start, start + 25).map((body) => gateway.post("/feedback", body)))
    for (const response of responses) expect(response.status, JSON.stringify(response.body)).toBe(200)
  }
}

const experimentation = async (gateway: RunningGateway, functionName: string) => {
  const response = await gateway.get(`/v1/experimentation/${functionName}`)
  expect(response.status, JSON.stringify(response.body)).toBe(200)
  // every answer as the published schema has it, and nothing more
  Schema.decodeUnknownSync(ExperimentationResponse)(response.body, { onExcessProperty: "error" })
  return response.body
}

/** the experiment once it stopped (polled) */
const untilStopped = (gateway: RunningGateway, functionName: string) => {
  let last: unknown
  return poll(`the experiment of ${functionName} to stop`, async () => {
    const view = await experimentation(gateway, functionName)
    last = view
    return view.stopped === true ? view : undefined
  }, { timeoutMs: 30_000, intervalMs: 200, last: () => last })
}

/** waits until new episodes draw with the computation `view` shows (or a later one) */
const untilInForce = async (view: { in_force_from: string }) => {
  const wait = Date.parse(view.in_force_from) - Date.now() + 100
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
}

describe.each(backends)("adaptive experimentation on %s", (backend) => {
  let database: TestDatabase
  let gateway: RunningGateway
  let second: RunningGateway | undefined
  const env = () => ({
    GATEWAY_ANALYTICS_DB_URL: database.url,
    // on Postgres, durable tasks on the same database: computations take the shared lock
    ...(backend === "postgres" ? { GATEWAY_RELATIONAL_DB_URL: database.url } : { GATEWAY_RELATIONAL_DB_URL: undefined })
  })

  beforeAll(async () => {
    database = await freshDatabase(backend)
    gateway = await startGateway({ config: observabilityToml() + functions, env: env() })
  })
  afterAll(async () => {
    await second?.stop()
    await gateway?.stop()
    await database?.drop()
  })

  it("starts uniform over the candidates, exploring them", async () => {
    const view = await experimentation(gateway, "pick")
    expect(view).toMatchObject({
      function_name: "pick",
      type: "adaptive",
      metric: "thumbs_up",
      optimize: "max",
      probabilities: { good: 0.5, poor: 0.5 },
      fallback_variants: ["spare"],
      stopped: false,
      exploring: ["good", "poor"],
      update_period_s: 1
    })
    expect(view.statistics).toEqual({ good: { count: 0, mean: null, variance: null }, poor: { count: 0, mean: null, variance: null } })
    const variants = (await infer(gateway, "pick", 100)).map(({ variant }) => variant)
    // expected 50 each (sd 5); never the fallback, which only follows a failure
    expect(count(variants, "good")).toBeGreaterThanOrEqual(28)
    expect(count(variants, "good")).toBeLessThanOrEqual(72)
    expect(count(variants, "spare")).toBe(0)
  })

  it("moves the probability to the variant the feedback favours, min_prob kept for the other, and new episodes follow", async () => {
    const answers = await infer(gateway, "pick", 60)
    await sendFeedback(gateway, answers.map(({ inferenceId, variant }) => ({ metric_name: "thumbs_up", inference_id: inferenceId, value: variant === "good" })))
    const view = await untilStopped(gateway, "pick")
    expect(view.winner).toBe("good")
    expect(view.probabilities.good).toBeCloseTo(0.9, 9)
    expect(view.probabilities.poor).toBeCloseTo(0.1, 9)
    expect(view.exploring).toEqual([])
    expect(view.statistics.good.mean).toBe(1)
    expect(view.statistics.poor.mean).toBe(0)
    // the computation that stopped it may have run while the last feedback was still being written
    expect(view.statistics.good.count).toBeGreaterThan(0)
    expect(view.statistics.poor.count).toBeGreaterThan(0)
    expect(view.statistics.good.count + view.statistics.poor.count).toBeLessThanOrEqual(60)
    expect(Date.parse(view.in_force_from)).toBeGreaterThan(Date.parse(view.computed_at))
    expect(gateway.log()).toContain(`function "pick": adaptive experimentation stopped: "good" is the best candidate on "thumbs_up"`)
    expect(gateway.log()).not.toContain("could not")

    await untilInForce(view)
    const variants = (await infer(gateway, "pick", 200)).map(({ variant }) => variant)
    // expected 180 (sd ~4.2): anything within ~5 sd passes; a uniform draw would give ~100
    expect(count(variants, "good")).toBeGreaterThanOrEqual(158)
    expect(count(variants, "good")).toBeLessThanOrEqual(199)
    expect(count(variants, "good") + count(variants, "poor")).toBe(200)
  })

  it("minimizes an episode-level metric: the variant whose episodes score lower wins", async () => {
    const answers = await infer(gateway, "flow", 40)
    // an episode's score goes on the episode, by the variant its inference was drawn
    await sendFeedback(gateway, answers.map(({ episodeId, variant }, i) => ({
      metric_name: "seconds_spent",
      episode_id: episodeId,
      value: (variant === "fast" ? 2 : 9) + (i % 4) * 0.25
    })))
    const view = await untilStopped(gateway, "flow")
    expect(view).toMatchObject({ type: "adaptive", metric: "seconds_spent", optimize: "min", winner: "fast" })
    expect(view.probabilities.fast).toBeCloseTo(0.95, 9)
    expect(view.probabilities.slow).toBeCloseTo(0.05, 9)
  })

  it("lets a pinned variant win over the experiment", async () => {
    const response = await gateway.post("/inference", { function_name: "pick", variant_name: "poor", input: hello })
    expect(response.status).toBe(200)
    expect(response.body.variant_name).toBe("poor")
  })

  it("reports the same probabilities from a second gateway on the same database, which gives an episode the same variant", async () => {
    second = await startGateway({ config: observabilityToml() + functions, env: env() })
    const first = await experimentation(gateway, "pick")
    const other = await poll("the second gateway to read the probabilities", async () => {
      const view = await experimentation(second!, "pick")
      return view.stopped === true ? view : undefined
    }, { timeoutMs: 15_000 })
    for (const field of ["probabilities", "stopped", "winner", "type", "metric"]) expect(other[field], field).toEqual(first[field])
    await untilInForce(other)
    // episodes the first gateway began, continued on the second: the same variant each time
    const begun = await infer(gateway, "pick", 40)
    const continued = await infer(second, "pick", 40, begun.map(({ episodeId }) => episodeId))
    expect(continued.map(({ variant }) => variant)).toEqual(begun.map(({ variant }) => variant))
  })

  it("answers a static experiment's and plain weights' normalized weights, and 404 for an unknown function", async () => {
    expect(await experimentation(gateway, "fixed")).toEqual({
      function_name: "fixed",
      type: "static",
      probabilities: { a: 0.75, b: 0.25 },
      fallback_variants: []
    })
    expect(await experimentation(gateway, "weighted")).toEqual({ function_name: "weighted", type: "weights", probabilities: { heavy: 0.8, light: 0.2 } })
    const missing = await gateway.get("/v1/experimentation/nope")
    expect(missing.status).toBe(404)
    expect(missing.body.error).toContain("\"nope\"")
  })
})

describe("adaptive experimentation without observability", () => {
  let gateway: RunningGateway
  beforeAll(async () => {
    gateway = await startGateway({ config: functions, env: { GATEWAY_ANALYTICS_DB_URL: undefined, GATEWAY_RELATIONAL_DB_URL: undefined } })
  })
  afterAll(async () => {
    await gateway?.stop()
  })

  it("says so at start-up, and draws the candidates uniformly", async () => {
    expect(gateway.log()).toMatch(/function "pick": adaptive experimentation .* observability is off .* drawn uniformly/)
    const view = await experimentation(gateway, "pick")
    expect(view).toMatchObject({ type: "adaptive", probabilities: { good: 0.5, poor: 0.5 }, computed_at: null, stopped: false })
    const variants = (await infer(gateway, "pick", 100)).map(({ variant }) => variant)
    expect(count(variants, "good")).toBeGreaterThanOrEqual(28)
    expect(count(variants, "good")).toBeLessThanOrEqual(72)
  })
})
