/**
 * Budgets set at run time (issue 39) over HTTP, two gateway processes on one Postgres: an admin
 * sets (PUT), lists (GET) and deletes (DELETE) its workspace's budgets; bad input is a 400 naming
 * the field; another workspace's budgets and keys are invisible (404 as unknown) and a member
 * key is refused; a budget set on gateway A is held by gateway B within the poll interval; both
 * acts are in the audit log; a budget set at run time is enforced by the other gateway (the 429
 * and its budget); `gateway budget list|set|delete` does the same from the command line.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ApiKey, call, createKey } from "../support/access.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, runGateway, startGateway } from "../support/gateway.ts"

let database: TestDatabase
let gatewayA: RunningGateway
let gatewayB: RunningGateway
let adminA: ApiKey
let adminB: ApiKey
let memberA: ApiKey
let global: ApiKey

const put = (gateway: RunningGateway, key: ApiKey, body: unknown, headers?: Record<string, string>) =>
  call(gateway, "PUT", "/v1/budgets", { key, body, headers })
const list = async (gateway: RunningGateway, key: ApiKey, headers?: Record<string, string>) => {
  const answer = await call(gateway, "GET", "/v1/budgets", { key, headers })
  expect(answer.status, answer.text).toBe(200)
  return answer.body.budgets as Array<any>
}

/** polls `check` until it holds, for at most `ms` */
const within = async (ms: number, check: () => Promise<boolean>) => {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (await check()) return true
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return check()
}

/** a model the dummy prices at 1 per token: each call uses 10 input and 10 output tokens, so costs 20 */
const config = `
[gateway.auth]
enabled = true

[models.priced]
routing = ["dummy"]
pricing = { input_per_million = 1000000, output_per_million = 1000000 }

[models.priced.providers.dummy]
type = "dummy"
model_name = "hello"

[functions.priced]
type = "chat"

[functions.priced.variants.only]
type = "chat_completion"
model = "priced"
max_tokens = 10
`

beforeAll(async () => {
  database = await freshDatabase("postgres")
  ;[adminA, adminB, memberA, global] = await Promise.all([
    createKey(database.url, ["--admin", "--workspace", "team-a"]),
    createKey(database.url, ["--admin", "--workspace", "team-b"]),
    createKey(database.url, ["--workspace", "team-a"]),
    createKey(database.url, ["--admin", "--global"])
  ])
  const options = { config, env: { GATEWAY_RELATIONAL_DB_URL: database.url, GATEWAY_ANALYTICS_DB_URL: database.url } }
  ;[gatewayA, gatewayB] = await Promise.all([startGateway(options), startGateway(options)])
})
afterAll(async () => {
  await gatewayA?.stop()
  await gatewayB?.stop()
  await database?.drop()
})

describe("PUT, GET and DELETE /v1/budgets", () => {
  it("a round trip: set, list, change the limit (same id), delete", async () => {
    const set = await put(gatewayA, adminA, { scope: { kind: "tag", key: "team", value: "search" }, period: "month", limit: 12.5 })
    expect(set.status, set.text).toBe(200)
    expect(set.body).toMatchObject({
      source: "runtime",
      scope: [{ kind: "workspace", value: "team-a" }, { kind: "tag", key: "team", value: "search" }],
      period: "month",
      limit: 12.5,
      updated_by: adminA.publicId
    })
    expect(Date.parse(set.body.updated_at)).toBeGreaterThan(Date.now() - 60_000)
    expect(await list(gatewayA, adminA)).toContainEqual(set.body)

    const changed = await put(gatewayA, adminA, { scope: { kind: "tag", key: "team", value: "search" }, period: "month", limit: 20 })
    expect(changed.status).toBe(200)
    expect(changed.body.id).toBe(set.body.id)
    expect(changed.body.limit).toBe(20)
    expect((await list(gatewayA, adminA)).filter((budget) => budget.id === set.body.id)).toEqual([changed.body])

    const deleted = await call(gatewayA, "DELETE", `/v1/budgets/${set.body.id}`, { key: adminA })
    expect(deleted.status, deleted.text).toBe(200)
    expect(deleted.body.id).toBe(set.body.id)
    expect((await list(gatewayA, adminA)).map((budget) => budget.id)).not.toContain(set.body.id)
    expect((await call(gatewayA, "DELETE", `/v1/budgets/${set.body.id}`, { key: adminA })).status).toBe(404)
  })

  it("the scopes: the workspace, an API key of the workspace, a tag; one budget per scope and period", async () => {
    const workspace = await put(gatewayA, adminA, { scope: { kind: "workspace" }, period: "day", limit: 5 })
    expect(workspace.body.scope).toEqual([{ kind: "workspace", value: "team-a" }])
    const key = await put(gatewayA, adminA, { scope: { kind: "api_key", value: memberA.publicId }, period: "total", limit: 1 })
    expect(key.status, key.text).toBe(200)
    expect(key.body.scope).toEqual([{ kind: "api_key", value: memberA.publicId }])
    const weekly = await put(gatewayA, adminA, { scope: { kind: "workspace" }, period: "week", limit: 30 })
    expect(weekly.body.id).not.toBe(workspace.body.id)
    const ids = (await list(gatewayA, adminA)).map((budget) => budget.id)
    expect(ids).toEqual(expect.arrayContaining([workspace.body.id, key.body.id, weekly.body.id]))
  })

  it("bad input: a 400 naming the field", async () => {
    const refused = async (body: unknown, field: string) => {
      const answer = await put(gatewayA, adminA, body)
      expect(answer.status, answer.text).toBe(400)
      expect(answer.body.error).toContain(field)
    }
    await refused({ scope: { kind: "team" }, period: "day", limit: 1 }, "scope.kind")
    await refused({ scope: { kind: "tag", key: "team" }, period: "day", limit: 1 }, "scope.value")
    await refused({ scope: { kind: "tag", value: "x" }, period: "day", limit: 1 }, "scope.key")
    await refused({ scope: { kind: "api_key" }, period: "day", limit: 1 }, "scope.value")
    await refused({ scope: { kind: "workspace", value: "team-b" }, period: "day", limit: 1 }, "scope")
    await refused({ scope: { kind: "workspace" }, period: "year", limit: 1 }, "period")
    await refused({ scope: { kind: "workspace" }, period: "day", limit: -1 }, "limit")
    await refused({ scope: { kind: "workspace" }, period: "day", limit: "5" }, "limit")
    await refused({ scope: { kind: "workspace" }, period: "day" }, "limit")
    expect((await call(gatewayA, "DELETE", "/v1/budgets/not-a-uuid", { key: adminA })).status).toBe(404)
  })
})

describe("workspaces", () => {
  it("another workspace's budget is invisible and cannot be deleted (the 404 of an unknown id)", async () => {
    const ofA = await put(gatewayA, adminA, { scope: { kind: "tag", key: "app", value: "a-only" }, period: "day", limit: 3 })
    expect((await list(gatewayA, adminB)).map((budget) => budget.id)).not.toContain(ofA.body.id)
    const foreign = await call(gatewayA, "DELETE", `/v1/budgets/${ofA.body.id}`, { key: adminB })
    const unknownId = "0190a0a0-0000-7000-8000-000000000000"
    const unknown = await call(gatewayA, "DELETE", `/v1/budgets/${unknownId}`, { key: adminB })
    expect(foreign.status).toBe(404)
    expect(unknown.status).toBe(404)
    expect(foreign.body.error.replace(ofA.body.id, "ID")).toBe(unknown.body.error.replace(unknownId, "ID"))
    expect((await list(gatewayA, adminA)).map((budget) => budget.id)).toContain(ofA.body.id)
  })

  it("an API key of another workspace is a 404, as an unknown key", async () => {
    const foreign = await put(gatewayA, adminB, { scope: { kind: "api_key", value: memberA.publicId }, period: "day", limit: 1 })
    expect(foreign.status).toBe(404)
    expect(foreign.body.error).toContain("scope.value")
    expect((await put(gatewayA, adminB, { scope: { kind: "api_key", value: "zzzzzzzzzzzz" }, period: "day", limit: 1 })).status).toBe(404)
  })

  it("a member key gets a 403; a global admin acts on the gateway-workspace header's workspace", async () => {
    expect((await call(gatewayA, "GET", "/v1/budgets", { key: memberA })).status).toBe(403)
    expect((await put(gatewayA, memberA, { scope: { kind: "workspace" }, period: "day", limit: 1 })).status).toBe(403)
    const byGlobal = await put(gatewayA, global, { scope: { kind: "workspace" }, period: "month", limit: 100 }, { "gateway-workspace": "team-b" })
    expect(byGlobal.status, byGlobal.text).toBe(200)
    expect(byGlobal.body.scope).toEqual([{ kind: "workspace", value: "team-b" }])
    expect((await list(gatewayA, adminB)).map((budget) => budget.id)).toContain(byGlobal.body.id)
    expect((await list(gatewayA, global, { "gateway-workspace": "team-b" })).map((budget) => budget.id)).toContain(byGlobal.body.id)
    expect((await list(gatewayA, adminA)).map((budget) => budget.id)).not.toContain(byGlobal.body.id)
  })

  it("both acts are in the audit log", async () => {
    const set = await put(gatewayA, adminA, { scope: { kind: "tag", key: "audited", value: "yes" }, period: "day", limit: 2 })
    expect((await call(gatewayA, "DELETE", `/v1/budgets/${set.body.id}`, { key: adminA })).status).toBe(200)
    const entries = (await call(gatewayA, "GET", "/v1/audit?limit=1000", { key: adminA })).body.entries as Array<any>
    expect(entries.find((entry) => entry.action === "budget.set")).toMatchObject({ actor: adminA.publicId, workspace: "team-a", outcome: "success" })
    expect(entries.find((entry) => entry.action === "budget.delete" && entry.target === set.body.id)).toMatchObject({
      actor: adminA.publicId,
      outcome: "success",
      status: 200
    })
  })
})

describe("two gateways", () => {
  it("a budget set on gateway A is held by gateway B within the poll interval, and so is its deletion", async () => {
    const set = await put(gatewayA, adminA, { scope: { kind: "tag", key: "shared", value: "across" }, period: "week", limit: 7 })
    expect(set.status).toBe(200)
    expect(await within(4_000, async () => (await list(gatewayB, adminA)).some((budget) => budget.id === set.body.id && budget.limit === 7))).toBe(true)
    expect((await call(gatewayA, "DELETE", `/v1/budgets/${set.body.id}`, { key: adminA })).status).toBe(200)
    expect(await within(4_000, async () => !(await list(gatewayB, adminA)).some((budget) => budget.id === set.body.id))).toBe(true)
  })
})

describe("a budget set at run time", () => {
  it("is enforced by every gateway: a workspace's calls are refused with 429 and the budget once the next one would pass it", async () => {
    // a workspace of its own: the other tests leave budgets in team-a
    const [adminC, memberC] = await Promise.all([
      createKey(database.url, ["--admin", "--workspace", "team-c"]),
      createKey(database.url, ["--workspace", "team-c"])
    ])
    const set = await put(gatewayA, adminC, { scope: { kind: "workspace" }, period: "day", limit: 100 })
    expect(set.status, set.text).toBe(200)
    expect(await within(4_000, async () => (await list(gatewayB, adminC)).some((budget) => budget.id === set.body.id))).toBe(true)
    const infer = (key: ApiKey) =>
      call(gatewayB, "POST", "/inference", { key, body: { function_name: "priced", input: { messages: [{ role: "user", content: "hi" }] } } })
    // each call reserves its estimate (the prompt's tokens, about a third of its length, plus max_tokens) and is charged 20
    let passed = 0
    let refused = await infer(memberC)
    while (refused.status === 200 && passed < 10) {
      passed++
      refused = await infer(memberC)
    }
    expect(refused.status, refused.text).toBe(429)
    // 4 calls fit (4 × 20 = 80, and a fifth's estimate of about 24 would pass 100); a settlement
    // may still be on its way (sent within a few milliseconds), its call's estimate held meanwhile
    expect([3, 4], refused.text).toContain(passed)
    const { budget } = refused.body
    expect(budget).toMatchObject({ scope: { kind: "workspace", value: "team-c" }, period: "day", limit: 100 })
    expect(budget.spent).toBeGreaterThanOrEqual(20 * passed)
    expect(budget.spent).toBeLessThanOrEqual(100)
    expect(budget.spent + budget.remaining).toBeCloseTo(100, 9)
    expect(budget.resets_at).toBe(new Date(Math.floor(Date.now() / 86_400_000 + 1) * 86_400_000).toISOString())
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
    // another workspace's calls are not counted against it
    expect((await infer(adminB)).status).toBe(200)
    // raised at run time: it applies to the next call at once (on the gateway that served the change)
    expect((await put(gatewayB, adminC, { scope: { kind: "workspace" }, period: "day", limit: 200 })).status).toBe(200)
    expect((await infer(memberC)).status).toBe(200)
  })
})

describe("gateway budget", () => {
  const cli = (args: ReadonlyArray<string>) => runGateway(["budget", ...args], { env: { GATEWAY_RELATIONAL_DB_URL: database.url } })

  it("set, list and delete a workspace's budget from the command line, seen over HTTP", async () => {
    const set = await cli(["set", "--workspace", "team-b", "--scope", "tag", "--key", "app", "--value", "cli", "--period", "day", "--limit", "4.5"])
    expect(set.code, set.stderr).toBe(0)
    const made = JSON.parse(set.stdout)
    expect(made).toMatchObject({ source: "runtime", period: "day", limit: 4.5, scope: [{ kind: "workspace", value: "team-b" }, { kind: "tag", key: "app", value: "cli" }] })

    const listed = await cli(["list", "--workspace", "team-b"])
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout.trim().split("\n").map((line) => JSON.parse(line).id)).toContain(made.id)
    expect(await within(4_000, async () => (await list(gatewayB, adminB)).some((budget) => budget.id === made.id))).toBe(true)

    // another workspace's id: not found
    const foreign = await cli(["delete", made.id, "--workspace", "team-a"])
    expect(foreign.code).toBe(1)
    expect(foreign.stderr).toContain(`no budget ${made.id}`)
    const deleted = await cli(["delete", made.id, "--workspace", "team-b"])
    expect(deleted.code, deleted.stderr).toBe(0)
    expect((await cli(["list", "--workspace", "team-b"])).stdout).not.toContain(made.id)

    const bad = await cli(["set", "--workspace", "team-b", "--scope", "workspace", "--period", "year", "--limit", "1"])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("period")
    const entries = (await call(gatewayA, "GET", "/v1/audit?action=budget.set", { key: adminB })).body.entries as Array<any>
    expect(entries.find((entry) => entry.actor_kind === "cli")).toMatchObject({ workspace: "team-b", target: made.id })
  })
})
