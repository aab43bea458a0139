/**
 * `GET /v1/spend` (issue 39) through a running gateway on both analytics backends: inferences
 * through the fake OpenAI, priced by the provider's `cost` rules, for two keys and two tag values
 * of one workspace and a key of another; the spend read back per workspace, key and tag equals
 * SUM(cost) read straight from the tables, a cached answer counts as a call costing 0, another
 * workspace's key or tag reads 0, only admins read, and bad queries are 400s naming the field.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ApiKey, call, createKey, withKey } from "../support/access.ts"
import { freshDatabase, queryDatabase, type TestDatabase } from "../support/databases.ts"
import { completion, type FakeOpenAi, startFakeOpenAi } from "../support/fakeOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { backends, observabilityToml, waitForInferences } from "../support/observability.ts"

const config = (apiBase: string) => `
[gateway.auth]
enabled = true
${observabilityToml()}
[models.priced]
routing = ["p"]
[models.priced.providers.p]
type = "openai"
model_name = "gpt-priced"
api_base = "${apiBase}"
api_key_location = "env::FAKE_OPENAI_KEY"
cost = [
  { pointer = "/usage/prompt_tokens", cost_per_million = 100, required = true },
  { pointer = "/usage/completion_tokens", cost_per_unit = 0.0002, required = true },
]

[functions.chat]
type = "chat"
[functions.chat.variants.v]
type = "chat_completion"
model = "priced"
`

describe.each(backends)("GET /v1/spend on %s", (backend) => {
  let analytics: TestDatabase
  let relational: TestDatabase | undefined
  let fake: FakeOpenAi
  let gateway: RunningGateway
  let adminA: ApiKey
  let memberA: ApiKey
  let otherA: ApiKey
  let adminB: ApiKey
  let global: ApiKey

  let sent = 0
  /**
   * one inference through `key` with `tags`, its usage `[prompt, completion]` tokens (none: a
   * repeated `text`, answered from the cache); its id once stored
   */
  const infer = async (key: ApiKey, tags: Record<string, string>, usage?: readonly [number, number], text = `hi ${++sent}`) => {
    if (usage !== undefined) {
      fake.script.push({ kind: "json", body: completion({ content: "Hello" }, { usage: { prompt_tokens: usage[0], completion_tokens: usage[1] } }) })
    }
    const answer = await call(gateway, "POST", "/inference", {
      key,
      body: { function_name: "chat", input: { messages: [{ role: "user", content: text }] }, tags, cache_options: { enabled: "on" } }
    })
    expect(answer.status, answer.text).toBe(200)
    await waitForInferences(withKey(gateway, key), [answer.body.inference_id], { include_model_inferences: true })
    return answer.body.inference_id as string
  }

  const spend = async (key: ApiKey, query: string, headers: Record<string, string> = {}) => {
    const answer = await call(gateway, "GET", `/v1/spend${query}`, { key, headers })
    expect(answer.status, answer.text).toBe(200)
    return answer.body
  }

  /** SUM(cost) and count of the stored model calls of `workspace`'s inferences carrying `tag` (all of them without), read straight from the tables */
  const stored = async (workspace: string, tag?: readonly [string, string]) => {
    const rows = backend === "clickhouse"
      ? await queryDatabase(analytics, `SELECT sum(ifNull(cost, 0)) AS cost, count() AS calls FROM ModelInference FINAL WHERE workspace = '${workspace}'` +
        (tag === undefined ? "" : ` AND inference_id IN (SELECT id FROM ChatInference FINAL WHERE tags.value[indexOf(tags.key, '${tag[0]}')] = '${tag[1]}')`))
      : await queryDatabase(analytics, `SELECT coalesce(sum(m.cost), 0) AS cost, count(*) AS calls FROM model_inference m JOIN chat_inference c ON c.id = m.inference_id ` +
        `WHERE c.workspace = '${workspace}'` + (tag === undefined ? "" : ` AND c.tags ->> '${tag[0]}' = '${tag[1]}'`))
    return { cost: Number(rows[0].cost), calls: Number(rows[0].calls) }
  }

  const expectTotal = (answer: any, wanted: { cost: number; calls: number }) => {
    expect(answer.total.calls).toBe(wanted.calls)
    expect(answer.total.cost).toBeCloseTo(wanted.cost, 12)
    // the periods add up to the total
    expect(answer.periods.reduce((sum: number, period: any) => sum + period.calls, 0)).toBe(wanted.calls)
    expect(answer.periods.reduce((sum: number, period: any) => sum + period.cost, 0)).toBeCloseTo(wanted.cost, 12)
  }

  beforeAll(async () => {
    ;[analytics, fake] = await Promise.all([freshDatabase(backend), startFakeOpenAi()])
    relational = backend === "clickhouse" ? await freshDatabase("postgres") : undefined
    const keys = (relational ?? analytics).url
    ;[adminA, memberA, otherA, adminB, global] = await Promise.all([
      createKey(keys, ["--admin", "--workspace", "team-a"]),
      createKey(keys, ["--workspace", "team-a"]),
      createKey(keys, ["--workspace", "team-a"]),
      createKey(keys, ["--admin", "--workspace", "team-b"]),
      createKey(keys, ["--admin", "--global"])
    ])
    gateway = await startGateway({
      config: config(fake.apiBase),
      env: { GATEWAY_ANALYTICS_DB_URL: analytics.url, GATEWAY_RELATIONAL_DB_URL: keys, FAKE_OPENAI_KEY: "sk-fake" }
    })
    await infer(memberA, { team: "red" }, [1000, 10])
    await infer(memberA, { team: "red" }, [2000, 20])
    await infer(memberA, { team: "blue" }, [3000, 30], "cache me")
    // the same request again: answered from the cache, a call costing 0
    await infer(memberA, { team: "blue" }, undefined, "cache me")
    expect(fake.requests).toHaveLength(3)
    await infer(otherA, { team: "red" }, [4000, 40])
    await infer(adminB, { team: "red" }, [5000, 50])
  })
  afterAll(async () => {
    await gateway?.stop()
    await fake?.close()
    await relational?.drop()
    await analytics?.drop()
  })

  it("a workspace's, a key's and a tag's spend equal the sum of the stored calls' costs", async () => {
    const all = await stored("team-a")
    expect(all.calls).toBe(5)
    // 10,000 prompt tokens at 100 per million and 100 completion tokens at 0.0002
    expect(all.cost).toBeCloseTo(1 + 0.02, 12)
    const whole = await spend(adminA, "")
    expect(whole).toMatchObject({ workspace: "team-a", scope: { kind: "workspace", value: "team-a" }, granularity: "day" })
    expectTotal(whole, all)
    // the default range: the 30 days before now, from the start of the first; today's period holds every call
    expect(whole.periods).toHaveLength(31)
    expect(whole.periods.at(-1)).toMatchObject({ period_start: `${new Date().toISOString().slice(0, 10)}T00:00:00.000Z`, calls: 5 })

    const byKey = await spend(adminA, `?api_key=${memberA.publicId}`)
    expect(byKey.scope).toEqual({ kind: "api_key", value: memberA.publicId })
    expectTotal(byKey, await stored("team-a", ["gateway::api_key_public_id", memberA.publicId]))
    expect(byKey.total.calls).toBe(4)
    expectTotal(await spend(adminA, `?api_key=${otherA.publicId}&granularity=month`), await stored("team-a", ["gateway::api_key_public_id", otherA.publicId]))

    const red = await spend(adminA, "?tag_key=team&tag_value=red&granularity=week")
    expect(red.scope).toEqual({ kind: "tag", key: "team", value: "red" })
    expectTotal(red, await stored("team-a", ["team", "red"]))
    expect(red.total.calls).toBe(3)
    const blue = await spend(adminA, "?tag_key=team&tag_value=blue")
    expectTotal(blue, await stored("team-a", ["team", "blue"]))
    expect(blue.total.calls).toBe(2)
  })

  it("reads a range per day, week or month in UTC", async () => {
    const now = Date.now()
    const from = new Date(now - 3 * 86_400_000).toISOString()
    const to = new Date(now + 86_400_000).toISOString()
    const days = await spend(adminA, `?from=${from}&to=${to}`)
    expect(days.from).toBe(from)
    expect(days.to).toBe(to)
    expect(days.periods).toHaveLength(5)
    expect(days.periods.map((period: any) => period.calls)).toEqual([0, 0, 0, 5, 0])
    const months = await spend(adminA, `?from=${from}&to=${to}&granularity=month`)
    const monthStart = (ms: number) => new Date(Date.UTC(new Date(ms).getUTCFullYear(), new Date(ms).getUTCMonth(), 1)).toISOString()
    expect(months.periods[0].period_start).toBe(monthStart(now - 3 * 86_400_000))
    expect(months.periods.find((period: any) => period.period_start === monthStart(now)).calls).toBe(5)
    // before the calls: nothing
    expectTotal(await spend(adminA, `?from=${new Date(now - 86_400_000 * 10).toISOString()}&to=${new Date(now - 86_400_000 * 5).toISOString()}`), { cost: 0, calls: 0 })
  })

  it("another workspace's key and tag read 0; a global admin reads the workspace its header names", async () => {
    expectTotal(await spend(adminB, `?api_key=${memberA.publicId}`), { cost: 0, calls: 0 })
    expectTotal(await spend(adminA, `?api_key=${adminB.publicId}`), { cost: 0, calls: 0 })
    const redOfB = await spend(adminB, "?tag_key=team&tag_value=red")
    expectTotal(redOfB, await stored("team-b", ["team", "red"]))
    expect(redOfB.total.calls).toBe(1)
    expectTotal(await spend(adminB, "?tag_key=team&tag_value=blue"), { cost: 0, calls: 0 })
    const fromGlobal = await spend(global, `?api_key=${memberA.publicId}`, { "gateway-workspace": "team-a" })
    expect(fromGlobal.workspace).toBe("team-a")
    expectTotal(fromGlobal, await stored("team-a", ["gateway::api_key_public_id", memberA.publicId]))
    expectTotal(await spend(global, `?api_key=${memberA.publicId}`), { cost: 0, calls: 0 })
  })

  it("is for admins: a member's key gets a 403; a workspace admin cannot name another workspace", async () => {
    const member = await call(gateway, "GET", "/v1/spend", { key: memberA })
    expect(member.status).toBe(403)
    expect(member.body.error).toContain("reading spend")
    expect((await call(gateway, "GET", "/v1/spend", { key: adminA, headers: { "gateway-workspace": "team-b" } })).status).toBe(403)
    expect((await call(gateway, "GET", "/v1/spend")).status).toBe(401)
  })

  it("answers a 400 naming the parameter at fault", async () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["?from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z", "from:"],
      ["?from=2025-01-01T00:00:00Z&to=2026-03-01T00:00:00Z", "from:"],
      ["?from=2020-01-01T00:00:00Z&to=2026-03-01T00:00:00Z&granularity=week", "from:"],
      ["?from=yesterday", "from:"],
      ["?to=2026-13-01T00:00:00Z", "to:"],
      ["?granularity=hour", "granularity:"],
      ["?tag_key=team", "tag_value:"],
      ["?tag_value=red", "tag_key:"],
      ["?api_key=sk-gw-secret", "api_key:"],
      [`?api_key=${memberA.publicId}&tag_key=team&tag_value=red`, "api_key:"]
    ]
    for (const [query, field] of cases) {
      const answer = await call(gateway, "GET", `/v1/spend${query}`, { key: adminA })
      expect(answer.status, query).toBe(400)
      expect(answer.body.error, query).toMatch(new RegExp(`^${field}`))
    }
    // the longest ranges are accepted
    expect((await call(gateway, "GET", "/v1/spend?from=2025-03-01T00:00:00Z&to=2026-03-02T00:00:00Z", { key: adminA })).status).toBe(200)
    expect((await call(gateway, "GET", "/v1/spend?from=2021-03-02T00:00:00Z&to=2026-03-02T00:00:00Z&granularity=month", { key: adminA })).status).toBe(200)
  })
})
