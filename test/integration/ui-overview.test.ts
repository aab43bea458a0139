/**
 * `GET /v1/ui/overview` over HTTP on the real command line (the embedded database, authentication
 * on): the seeded inferences (12 of haiku split between its variants, one of extract_greeting
 * whose first provider fails) counted per variant and per function, the haiku_rating feedback's
 * mean per variant with Wilson intervals, the model calls (the failed provider's call is not
 * stored), the 400s naming the parameter, the 404 of an unknown function, and the admin role.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startUiGateway, type UiGateway, until } from "../support/uiGateway.ts"

describe("GET /v1/ui/overview", () => {
  let ui: UiGateway
  beforeAll(async () => {
    ui = await startUiGateway({ auth: true })
    // the seeded feedback is written after its answer, by the write queue
    await until(async () => {
      const { body } = await overview("?function_name=haiku")
      return body.metrics?.[0]?.variants.reduce((sum: number, variant: any) => sum + variant.count, 0) === 6
    })
  }, 120_000)
  afterAll(async () => {
    await ui?.stop()
  })

  const overview = async (query: string, headers: Record<string, string> = ui.headers) => {
    const response = await fetch(`${ui.url}/v1/ui/overview${query}`, { headers })
    return { status: response.status, body: await response.json() as any }
  }

  it("counts a function's inferences per variant, with shares summing to 1 and every bucket of the range", async () => {
    const { body, status } = await overview("?function_name=haiku")
    expect(status).toBe(200)
    expect(body.function_name).toBe("haiku")
    expect(body.split_by).toBe("variant")
    expect(body.bucket).toBe("hour")
    expect(Date.parse(body.to) - Date.parse(body.from)).toBe(86_400_000)
    expect(body.total_inferences).toBe(12)
    expect(body.bucket_starts.length).toBeGreaterThanOrEqual(24)
    expect(body.series.map((series: any) => series.name).every((name: string) => ["echo", "fixed"].includes(name))).toBe(true)
    expect(body.series.reduce((sum: number, series: any) => sum + series.total, 0)).toBe(12)
    expect(body.series.reduce((sum: number, series: any) => sum + series.share, 0)).toBeCloseTo(1, 12)
    for (const series of body.series) {
      expect(series.counts).toHaveLength(body.bucket_starts.length)
      expect(series.counts.reduce((a: number, b: number) => a + b, 0)).toBe(series.total)
    }
    expect(body.functions.filter((fn: any) => !fn.name.startsWith("gateway::"))).toEqual([
      { name: "extract_greeting", type: "json", configured: true, inferences: 1 },
      { name: "haiku", type: "chat", configured: true, inferences: 12 }
    ])
  })

  it("gives the seeded feedback's mean per variant with its Wilson interval", async () => {
    const { body } = await overview("?function_name=haiku")
    expect(body.metrics.map((metric: any) => [metric.metric_name, metric.type, metric.level, metric.optimize, metric.interval]))
      .toEqual([["haiku_rating", "boolean", "inference", "max", "wilson"]])
    const variants = body.metrics[0].variants
    // 6 ratings, 3 of them true
    expect(variants.reduce((sum: number, variant: any) => sum + variant.count, 0)).toBe(6)
    expect(variants.reduce((sum: number, variant: any) => sum + variant.mean * variant.count, 0)).toBeCloseTo(3, 9)
    for (const variant of variants) {
      expect(variant.ci_lower).toBeLessThanOrEqual(variant.mean)
      expect(variant.ci_upper).toBeGreaterThanOrEqual(variant.mean)
      expect(variant.ci_lower).toBeGreaterThanOrEqual(0)
      expect(variant.ci_upper).toBeLessThanOrEqual(1)
    }
  })

  it("gives the model calls per model and provider: one per haiku inference, the failed provider's not stored", async () => {
    const haiku = (await overview("?function_name=haiku")).body
    expect(haiku.models.reduce((sum: number, model: any) => sum + model.calls, 0)).toBe(12)
    for (const model of haiku.models) {
      expect(model.cached_calls).toBe(0)
      expect(model.response_time_ms.p50).toBeLessThanOrEqual(model.response_time_ms.p90)
      expect(model.response_time_ms.p90).toBeLessThanOrEqual(model.response_time_ms.p99)
    }
    const all = (await overview("")).body
    expect(all.function_name).toBeNull()
    expect(all.split_by).toBe("function")
    expect(all.metrics).toEqual([])
    expect(all.series.map((series: any) => [series.name, series.total])).toEqual([["haiku", 12], ["extract_greeting", 1]])
    const json = all.models.filter((model: any) => model.model_name === "my_model")
    expect(json.map((model: any) => [model.provider_name, model.calls])).toEqual([["working", 1]])
  })

  it("gives the error rates of this process's provider calls, whatever the range: the failing provider's 100%", async () => {
    const { body } = await overview("?from=2020-01-01T00:00:00Z&to=2020-01-01T01:00:00Z")
    expect(Date.parse(body.provider_outcomes.since)).toBeLessThan(Date.now())
    const outcome = (model: string, provider: string) =>
      body.provider_outcomes.outcomes.find((row: any) => row.model === model && row.provider === provider)
    expect(outcome("my_model", "broken")).toEqual({ model: "my_model", provider: "broken", answered: 0, failed: 1, error_rate: 1 })
    expect(outcome("my_model", "working")).toEqual({ model: "my_model", provider: "working", answered: 1, failed: 0, error_rate: 0 })
    // short-hands are labelled by their type, as on /metrics
    expect(outcome("dummy::*", "dummy")).toMatchObject({ answered: 12, failed: 0, error_rate: 0 })
  })

  it("answers nothing in a range without inferences, with a bucket per minute", async () => {
    const { body, status } = await overview("?function_name=haiku&from=2020-01-01T00:00:00Z&to=2020-01-01T01:00:00Z&bucket=minute")
    expect(status).toBe(200)
    expect(body.bucket_starts).toHaveLength(60)
    expect(body.bucket_starts[1]).toBe("2020-01-01T00:01:00.000Z")
    expect(body).toMatchObject({ total_inferences: 0, series: [], metrics: [], models: [] })
    expect(body.functions.find((fn: any) => fn.name === "haiku").inferences).toBe(0)
  })

  it("answers 400 naming the parameter for a bad time, an empty range, a bad bucket or too many buckets", async () => {
    const cases: ReadonlyArray<[string, RegExp]> = [
      ["?from=yesterday", /^from: "yesterday" is not an RFC 3339 date-time/],
      ["?to=2026-13-01T00:00:00Z", /^to: /],
      ["?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z", /^from: .* is not before to/],
      ["?bucket=week", /^bucket: "week" is not one of minute, hour, day/],
      ["?from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z&bucket=minute", /^bucket: .* exceed 1500/]
    ]
    for (const [query, message] of cases) {
      const { body, status } = await overview(query)
      expect(status, query).toBe(400)
      expect(body.error, query).toMatch(message)
    }
  })

  it("answers 404 for a function neither configured nor stored", async () => {
    const { body, status } = await overview("?function_name=nope")
    expect(status).toBe(404)
    expect(body.error).toBe(`function "nope" is not configured and has no stored inference`)
  })

  it("is for admin keys only", async () => {
    expect((await overview("", {})).status).toBe(401)
    const key = await ui.keyCommand(["--create-api-key"])
    const refused = await overview("", { authorization: `Bearer ${key}` })
    expect(refused.status).toBe(403)
    expect(refused.body.error).toMatch(/does not have the admin role/)
  })
})
