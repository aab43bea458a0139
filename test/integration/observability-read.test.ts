/**
 * Observability conformance, part 3 (issue 3, "Reading back"), against ClickHouse and
 * Postgres alike: get_inferences in the order asked, list_inferences by function, variant,
 * episode, tags, time, metrics and demonstrations, newest first, paged; and the 400s of bad
 * reading requests.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { v7 as uuidv7 } from "uuid"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { backends, getInferences, listInferences, observabilityToml, poll, userInput, waitForInferences } from "../support/observability.ts"

const config = `
${observabilityToml()}

[metrics.good]
type = "boolean"
level = "inference"
optimize = "max"

[metrics.score]
type = "float"
level = "inference"
optimize = "max"

[metrics.solved]
type = "boolean"
level = "episode"
optimize = "max"

[functions.listed]
type = "chat"
[functions.listed.variants.a]
type = "chat_completion"
model = "dummy::hello"
[functions.listed.variants.b]
type = "chat_completion"
model = "dummy::hello"

[functions.other]
type = "chat"
[functions.other.variants.a]
type = "chat_completion"
model = "dummy::hello"
`

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Made {
  readonly id: string
  readonly episode: string
  readonly variant: string
  readonly tags: Record<string, string>
  readonly timestamp: string
}

describe.each(backends)("observability on %s: reading stored inferences back", (backend) => {
  let database: TestDatabase
  let gateway: RunningGateway
  /** the inferences of function `listed`, oldest first */
  const made: Array<Made> = []
  let otherId: string

  const ids = (inferences: ReadonlyArray<any>) => inferences.map((inference) => inference.inference_id)
  /** ids of `made` (by index), newest first, as list_inferences orders them */
  const newestFirst = (...indexes: ReadonlyArray<number>) => [...indexes].sort((a, b) => b - a).map((index) => made[index].id)
  const list = (query: Record<string, unknown>) => listInferences(gateway, { function_name: "listed", ...query }).then(ids)

  beforeAll(async () => {
    database = await freshDatabase(backend)
    gateway = await startGateway({ config, env: { GATEWAY_ANALYTICS_DB_URL: database.url } })
    // six inferences: 0-2 in one episode, 3-5 in others; variants a b a b a b; teams red red red blue blue green
    const teams = ["red", "red", "red", "blue", "blue", "green"]
    let episode: string | undefined
    for (let i = 0; i < 6; i++) {
      const variant = i % 2 === 0 ? "a" : "b"
      const tags: Record<string, string> = { team: teams[i], n: String(i) }
      if (i === 1) tags.flag = "x"
      const response = await gateway.post("/inference", {
        function_name: "listed",
        variant_name: variant,
        input: userInput(`message ${i}`),
        tags,
        ...(i > 0 && i < 3 ? { episode_id: episode } : {})
      })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      if (i === 0) episode = response.body.episode_id
      made.push({ id: response.body.inference_id, episode: response.body.episode_id, variant, tags, timestamp: "" })
      // distinct milliseconds, so that time filters can tell them apart
      await sleep(15)
    }
    const other = await gateway.post("/inference", { function_name: "other", input: userInput("other"), tags: { team: "red" } })
    otherId = other.body.inference_id
    const stored = await waitForInferences(gateway, [...made.map((m) => m.id), otherId])
    for (let i = 0; i < 6; i++) (made[i] as { timestamp: string }).timestamp = stored[i].timestamp
  })
  afterAll(async () => {
    await gateway?.stop()
    await database?.drop()
  })

  it("get_inferences answers in the order of the ids asked, without the unknown ones", async () => {
    const unknown = uuidv7()
    const found = await getInferences(gateway, [made[4].id, unknown, made[0].id, otherId, made[2].id])
    expect(ids(found)).toEqual([made[4].id, made[0].id, otherId, made[2].id])
    expect(found[0]).toMatchObject({ function_name: "listed", variant_name: "a", tags: made[4].tags, episode_id: made[4].episode })
    expect(found[2]).toMatchObject({ function_name: "other", tags: { team: "red" } })
    expect(await getInferences(gateway, [unknown])).toEqual([])
    expect(await getInferences(gateway, [])).toEqual([])
    // no feedback nor model inferences unless asked
    expect(found[0]).not.toHaveProperty("feedback")
    expect(found[0]).not.toHaveProperty("model_inferences")
  })

  it("get_inferences answers 400 for an id that is not a UUIDv7, and for a malformed body", async () => {
    const bad = await gateway.post("/v1/inferences/get_inferences", { ids: [made[0].id, "not-an-id"] })
    expect(bad.status).toBe(400)
    expect(bad.body.error).toContain("ids[1]")
    expect(bad.body.error).toContain("not-an-id")
    const v4 = await gateway.post("/v1/inferences/get_inferences", { ids: ["0b6f2b3c-4a1e-4f0e-9c3d-2a8f7e6d5c4b"] })
    expect(v4.status).toBe(400)
    for (const body of [{}, { ids: "x" }, { ids: [1] }, { ids: [], extra: true }, "[]", "nope"]) {
      const response = await gateway.post("/v1/inferences/get_inferences", body)
      expect(response.status, JSON.stringify(body)).toBe(400)
      expect(typeof response.body.error).toBe("string")
    }
  })

  it("list_inferences by function, newest first; by variant; by episode", async () => {
    expect(await list({})).toEqual(newestFirst(0, 1, 2, 3, 4, 5))
    expect(await list({ variant_name: "a" })).toEqual(newestFirst(0, 2, 4))
    expect(await list({ variant_name: "b" })).toEqual(newestFirst(1, 3, 5))
    expect(await list({ variant_name: "nope" })).toEqual([])
    expect(await list({ episode_id: made[0].episode })).toEqual(newestFirst(0, 1, 2))
    expect(await list({ episode_id: made[0].episode, variant_name: "b" })).toEqual(newestFirst(1))
    expect(await list({ episode_id: made[3].episode })).toEqual(newestFirst(3))
    expect(ids(await listInferences(gateway, { function_name: "other" }))).toEqual([otherId])
    expect(await listInferences(gateway, { function_name: "missing" })).toEqual([])
    // without a function: every function, newest first
    expect(ids(await listInferences(gateway, {}))).toEqual([otherId, ...newestFirst(0, 1, 2, 3, 4, 5)])
  })

  it("list_inferences filters on tags: = and !=, and, or, not", async () => {
    expect(await list({ filters: { type: "tag", key: "team", value: "red" } })).toEqual(newestFirst(0, 1, 2))
    expect(await list({ filters: { type: "tag", key: "team", value: "red", comparison_operator: "=" } })).toEqual(newestFirst(0, 1, 2))
    expect(await list({ filters: { type: "tag", key: "team", value: "red", comparison_operator: "!=" } })).toEqual(newestFirst(3, 4, 5))
    expect(await list({ filters: { type: "tag", key: "team", value: "purple" } })).toEqual([])
    expect(await list({ filters: { type: "tag", key: "flag", value: "x" } })).toEqual(newestFirst(1))
    // an inference without the tag matches neither = nor != (and so matches `not` of either)
    expect(await list({ filters: { type: "tag", key: "flag", value: "y", comparison_operator: "!=" } })).toEqual(newestFirst(1))
    expect(await list({ filters: { type: "tag", key: "flag", value: "x", comparison_operator: "!=" } })).toEqual([])
    expect(await list({ filters: { type: "not", child: { type: "tag", key: "flag", value: "x" } } })).toEqual(newestFirst(0, 2, 3, 4, 5))
    // and/or without children: everything, nothing
    expect(await list({ filters: { type: "and", children: [] } })).toEqual(newestFirst(0, 1, 2, 3, 4, 5))
    expect(await list({ filters: { type: "or", children: [] } })).toEqual([])
    expect(await list({
      filters: {
        type: "and",
        children: [{ type: "tag", key: "team", value: "red" }, { type: "not", child: { type: "tag", key: "n", value: "0" } }]
      }
    })).toEqual(newestFirst(1, 2))
    expect(await list({
      filters: { type: "or", children: [{ type: "tag", key: "n", value: "1" }, { type: "tag", key: "team", value: "green" }] }
    })).toEqual(newestFirst(1, 5))
    expect(await list({ filters: { type: "not", child: { type: "tag", key: "team", value: "blue" } } })).toEqual(newestFirst(0, 1, 2, 5))
    expect(await list({
      filters: {
        type: "and",
        children: [
          { type: "or", children: [{ type: "tag", key: "team", value: "blue" }, { type: "tag", key: "team", value: "green" }] },
          { type: "tag", key: "n", value: "4", comparison_operator: "!=" }
        ]
      }
    })).toEqual(newestFirst(3, 5))
    // combined with the other criteria
    expect(await list({ variant_name: "a", filters: { type: "tag", key: "team", value: "red" } })).toEqual(newestFirst(0, 2))
    // across functions
    expect(ids(await listInferences(gateway, { filters: { type: "tag", key: "team", value: "red" } }))).toEqual([otherId, ...newestFirst(0, 1, 2)])
  })

  it("list_inferences filters on time (RFC 3339), alone and combined", async () => {
    const t2 = made[2].timestamp
    expect(Date.parse(t2)).toBeGreaterThan(Date.parse(made[1].timestamp))
    expect(await list({ filters: { type: "time", time: t2, comparison_operator: ">" } })).toEqual(newestFirst(3, 4, 5))
    expect(await list({ filters: { type: "time", time: t2, comparison_operator: ">=" } })).toEqual(newestFirst(2, 3, 4, 5))
    expect(await list({ filters: { type: "time", time: t2, comparison_operator: "<" } })).toEqual(newestFirst(0, 1))
    expect(await list({ filters: { type: "time", time: t2, comparison_operator: "<=" } })).toEqual(newestFirst(0, 1, 2))
    // another offset, the same instant
    const shifted = new Date(Date.parse(t2) + 2 * 3600_000).toISOString().replace("Z", "+02:00")
    expect(await list({ filters: { type: "time", time: shifted, comparison_operator: "<=" } })).toEqual(newestFirst(0, 1, 2))
    expect(await list({ filters: { type: "time", time: "2000-01-01T00:00:00Z", comparison_operator: "<" } })).toEqual([])
    expect(await list({ filters: { type: "time", time: "2999-01-01T00:00:00Z", comparison_operator: "<" } })).toEqual(newestFirst(0, 1, 2, 3, 4, 5))
    expect(await list({
      filters: {
        type: "and",
        children: [
          { type: "time", time: made[1].timestamp, comparison_operator: ">=" },
          { type: "time", time: made[4].timestamp, comparison_operator: "<" },
          { type: "not", child: { type: "tag", key: "team", value: "blue" } }
        ]
      }
    })).toEqual(newestFirst(1, 2))
  })

  it("list_inferences answers 400 for an invalid time, naming where it is", async () => {
    const top = await gateway.post("/v1/inferences/list_inferences", {
      filters: { type: "time", time: "yesterday", comparison_operator: ">" }
    })
    expect(top.status).toBe(400)
    expect(top.body.error).toContain("filters.time")
    expect(top.body.error).toContain("yesterday")
    const nested = await gateway.post("/v1/inferences/list_inferences", {
      filters: {
        type: "and",
        children: [
          { type: "tag", key: "team", value: "red" },
          { type: "not", child: { type: "time", time: "2024-13-45 10:00", comparison_operator: "<" } }
        ]
      }
    })
    expect(nested.status).toBe(400)
    expect(nested.body.error).toContain("filters.children[1].child.time")
    // a date without a time is not RFC 3339 either
    const dateOnly = await gateway.post("/v1/inferences/list_inferences", {
      filters: { type: "time", time: "2024-01-01", comparison_operator: ">" }
    })
    expect(dateOnly.status).toBe(400)
    // nor a day the month lacks (Date.parse alone would read it as March 2)
    const february30 = await gateway.post("/v1/inferences/list_inferences", {
      filters: { type: "time", time: "2026-02-30T00:00:00Z", comparison_operator: ">" }
    })
    expect(february30.status).toBe(400)
    expect(february30.body.error).toContain("2026-02-30T00:00:00Z")
  })

  it("list_inferences pages with limit and offset, newest first", async () => {
    const all = newestFirst(0, 1, 2, 3, 4, 5)
    expect(await list({ limit: 2 })).toEqual(all.slice(0, 2))
    expect(await list({ limit: 2, offset: 2 })).toEqual(all.slice(2, 4))
    expect(await list({ limit: 2, offset: 4 })).toEqual(all.slice(4, 6))
    expect(await list({ limit: 2, offset: 6 })).toEqual([])
    expect(await list({ offset: 5 })).toEqual(all.slice(5))
    expect(await list({ limit: 1000 })).toEqual(all)
    expect(await list({ limit: 1, offset: 1, variant_name: "b" })).toEqual(newestFirst(3))
  })

  it("list_inferences includes model inferences and feedback when asked", async () => {
    const feedback = await gateway.post("/feedback", { metric_name: "comment", episode_id: made[0].episode, value: "episode note" })
    expect(feedback.status).toBe(200)
    const listed = await poll("the comment to be listed", async () => {
      const found = await listInferences(gateway, {
        function_name: "listed",
        episode_id: made[0].episode,
        include_feedback: true,
        include_model_inferences: true
      })
      return found.every((inference) => inference.feedback.length === 1) ? found : undefined
    })
    expect(ids(listed)).toEqual(newestFirst(0, 1, 2))
    for (const inference of listed) {
      expect(inference.feedback[0]).toMatchObject({ feedback_id: feedback.body.feedback_id, metric_name: "comment", value: "episode note" })
      expect(inference.model_inferences).toHaveLength(1)
      expect(inference.model_inferences[0]).toMatchObject({ model_name: "dummy::hello", cached: false })
    }
    const plain = await listInferences(gateway, { function_name: "listed", limit: 1 })
    expect(plain[0]).not.toHaveProperty("feedback")
    expect(plain[0]).not.toHaveProperty("model_inferences")
  })

  it("list_inferences answers 400 for a limit or offset out of range, a bad filter or episode id, and an unknown field", async () => {
    const bodies: Array<Record<string, unknown>> = [
      { limit: 0 },
      { limit: 1001 },
      { limit: -1 },
      { limit: 2.5 },
      { limit: "10" },
      { offset: -1 },
      { episode_id: "not-an-episode" },
      { filters: { type: "tag", key: "team" } },
      { filters: { type: "time", time: "2024-01-01T00:00:00Z", comparison_operator: "==" } },
      { filters: { type: "xor", children: [] } },
      { filters: { type: "tag", key: "team", value: "red", comparison_operator: "like" } },
      { function: "listed" }
    ]
    for (const body of bodies) {
      const response = await gateway.post("/v1/inferences/list_inferences", body)
      expect(response.status, JSON.stringify(body)).toBe(400)
      expect(typeof response.body.error, JSON.stringify(body)).toBe("string")
    }
    const limit = await gateway.post("/v1/inferences/list_inferences", { limit: 1001 })
    expect(limit.body.error).toContain("limit")
  })

  it("list_inferences filters on time with = and !=", async () => {
    expect(await list({ filters: { type: "time", time: made[2].timestamp, comparison_operator: "=" } })).toEqual(newestFirst(2))
    expect(await list({ filters: { type: "time", time: made[2].timestamp, comparison_operator: "!=" } })).toEqual(newestFirst(0, 1, 3, 4, 5))
    expect(await list({ filters: { type: "time", time: "2000-01-01T00:00:00Z", comparison_operator: "=" } })).toEqual([])
  })

  // last: the feedback it gives would change what the tests above read with include_feedback
  it("list_inferences filters on the latest value of metrics, on inferences and episodes, and on demonstrations", async () => {
    const given: Array<[string, Record<string, unknown>]> = [
      ["good", { inference_id: made[3].id, value: true }],
      ["good", { inference_id: made[4].id, value: false }],
      ["good", { inference_id: made[4].id, value: true }],
      ["good", { inference_id: made[5].id, value: true }],
      ["good", { inference_id: made[5].id, value: false }],
      ["score", { inference_id: made[3].id, value: 0.5 }],
      ["score", { inference_id: made[4].id, value: 0.1 + 0.2 }],
      ["solved", { episode_id: made[3].episode, value: true }],
      ["demonstration", { inference_id: made[5].id, value: [{ type: "text", text: "a better answer" }] }]
    ]
    // one at a time: feedback ids, in the order given, decide which value is the latest
    for (const [metric_name, fields] of given) {
      const response = await gateway.post("/feedback", { metric_name, ...fields })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
    }
    const good = { type: "boolean_metric", metric_name: "good", value: true }
    await poll("the feedback to be stored", async () => {
      const found = await getInferences(gateway, [made[3].id, made[4].id, made[5].id], { include_feedback: true })
      return found.map((inference) => inference.feedback.length).join() === "3,3,3" ? found : undefined
    })

    // inferences rated good, as a person would ask: the newest rating of each counts
    const ratedGood = await listInferences(gateway, { function_name: "listed", filters: good, include_feedback: true })
    expect(ids(ratedGood)).toEqual(newestFirst(3, 4))
    expect(ratedGood[0].feedback.filter((f: any) => f.metric_name === "good").map((f: any) => f.value)).toEqual([false, true])
    expect(await list({ filters: { ...good, value: false } })).toEqual(newestFirst(5))
    // an inference never rated matches neither value, and so matches `not` of either
    expect(await list({ filters: { type: "not", child: good } })).toEqual(newestFirst(0, 1, 2, 5))

    const score = (comparison_operator: string, value: number) => list({ filters: { type: "float_metric", metric_name: "score", value, comparison_operator } })
    expect(await score(">=", 0.5)).toEqual(newestFirst(3))
    expect(await score("<", 0.5)).toEqual(newestFirst(4))
    expect(await score("=", 0.1 + 0.2)).toEqual(newestFirst(4))
    expect(await score("=", 0.3)).toEqual([])
    expect(await score("!=", 0.5)).toEqual(newestFirst(4))

    expect(await list({ filters: { type: "boolean_metric", metric_name: "solved", value: true } })).toEqual(newestFirst(3))
    expect(await list({ filters: { type: "demonstration" } })).toEqual(newestFirst(5))
    expect(await list({
      filters: { type: "or", children: [{ type: "and", children: [good, { type: "tag", key: "n", value: "4" }] }, { type: "demonstration" }] }
    })).toEqual(newestFirst(4, 5))
  })

  it("list_inferences answers 400 for a metric filter on an unknown metric, on a metric of the other type, or with a bad operator or value", async () => {
    const error = async (filters: unknown) => {
      const response = await gateway.post("/v1/inferences/list_inferences", { function_name: "listed", filters })
      expect(response.status, JSON.stringify(filters)).toBe(400)
      return response.body.error as string
    }
    expect(await error({
      type: "and",
      children: [{ type: "tag", key: "team", value: "red" }, { type: "boolean_metric", metric_name: "nope", value: true }]
    })).toBe(`filters.children[1].metric_name: unknown metric "nope"`)
    // comment and demonstration are not metrics one filters on by value
    expect(await error({ type: "float_metric", metric_name: "comment", value: 1, comparison_operator: ">" })).toBe(`filters.metric_name: unknown metric "comment"`)
    expect(await error({ type: "boolean_metric", metric_name: "score", value: true })).toMatch(/^filters\.type: metric "score" is a float metric/)
    expect(await error({ type: "not", child: { type: "float_metric", metric_name: "good", value: 1, comparison_operator: "=" } }))
      .toMatch(/^filters\.child\.type: metric "good" is a boolean metric/)
    for (
      const filters of [
        { type: "float_metric", metric_name: "score", value: 1, comparison_operator: "~" },
        { type: "float_metric", metric_name: "score", value: 1 },
        { type: "float_metric", metric_name: "score", value: "1", comparison_operator: ">" },
        { type: "float_metric", metric_name: "score", value: null, comparison_operator: ">" },
        { type: "boolean_metric", metric_name: "good", value: "true" },
        { type: "boolean_metric", value: true },
        { type: "boolean_metric", metric_name: "good", value: true, comparison_operator: "=" },
        { type: "demonstration", value: true },
        { type: "metric", metric_name: "good", value: true }
      ]
    ) {
      expect(await error(filters)).toMatch(/^filters/)
    }
  })
})
