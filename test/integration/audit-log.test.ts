/**
 * The audit log (issue 39) over HTTP on a real Postgres: administrative acts — keys created and
 * disabled (UI routes and command line), configuration reloads, dataset deletions, sign-ins and
 * failed sign-ins — recorded with who, what, when, from where and how they ended; `GET
 * /v1/audit` shows a workspace admin its workspace's entries and a global admin every one, with
 * filters, pages and a JSON Lines export; the table refuses every change but an insert.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ApiKey, call, createKey, psql } from "../support/access.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, runGateway, startGateway } from "../support/gateway.ts"

let database: TestDatabase
let gateway: RunningGateway
let adminA: ApiKey
let adminB: ApiKey
let memberA: ApiKey
let global: ApiKey
/** the key adminA made and disabled through the UI's routes */
let madeByA: string

const audit = async (key: ApiKey, query = "") => {
  const answer = await call(gateway, "GET", `/v1/audit${query}`, { key })
  expect(answer.status, answer.text).toBe(200)
  return answer.body as { entries: Array<any>; next: string | null }
}

beforeAll(async () => {
  database = await freshDatabase("postgres")
  ;[adminA, adminB, memberA, global] = await Promise.all([
    createKey(database.url, ["--admin", "--workspace", "team-a"]),
    createKey(database.url, ["--admin", "--workspace", "team-b"]),
    createKey(database.url, ["--workspace", "team-a"]),
    createKey(database.url, ["--admin", "--global"])
  ])
  gateway = await startGateway({
    config: "[gateway.auth]\nenabled = true\n",
    env: { GATEWAY_RELATIONAL_DB_URL: database.url, GATEWAY_ANALYTICS_DB_URL: database.url }
  })
  const created = await call(gateway, "POST", "/v1/ui/api_keys", { key: adminA, body: {} })
  madeByA = created.body.public_id
  expect((await call(gateway, "POST", `/v1/ui/api_keys/${madeByA}/disable`, { key: adminA })).status).toBe(200)
  // another workspace's key: refused as unknown, and recorded as a failure
  expect((await call(gateway, "POST", `/v1/ui/api_keys/${memberA.publicId}/disable`, { key: adminB })).status).toBe(404)
  expect((await call(gateway, "DELETE", "/v1/datasets/train", { key: adminA })).status).toBe(200)
  expect((await call(gateway, "POST", "/internal/config/reload", { key: global })).status).toBe(200)
  expect((await call(gateway, "POST", "/v1/ui/session", { body: { api_key: adminB.key } })).status).toBe(200)
  expect((await call(gateway, "POST", "/v1/ui/session", { body: { api_key: `sk-gw-${adminB.publicId}-${"A".repeat(48)}` } })).status).toBe(401)
  expect((await call(gateway, "POST", "/v1/ui/session", { body: { api_key: memberA.key } })).status).toBe(403)
})
afterAll(async () => {
  await gateway?.stop()
  await database?.drop()
})

describe("what is recorded", () => {
  it("keys created and disabled through the UI, with the admin, the target, the status and the address", async () => {
    const { entries } = await audit(adminA)
    const create = entries.find((entry) => entry.action === "api_key.create" && entry.actor === adminA.publicId)
    expect(create).toMatchObject({ workspace: "team-a", actor_kind: "api_key", outcome: "success", status: 200, target: null })
    expect(create.address).toMatch(/127\.0\.0\.1/)
    expect(Date.parse(create.time)).toBeGreaterThan(Date.now() - 120_000)
    expect(entries.find((entry) => entry.action === "api_key.disable")).toMatchObject({
      actor: adminA.publicId,
      target: madeByA,
      outcome: "success",
      status: 200
    })
    expect(entries.find((entry) => entry.action === "dataset.delete")).toMatchObject({ target: "train", outcome: "success", workspace: "team-a" })
  })

  it("a refused act as a failure with its status, in the workspace it was tried in", async () => {
    const { entries } = await audit(adminB)
    expect(entries.find((entry) => entry.action === "api_key.disable")).toMatchObject({
      workspace: "team-b",
      actor: adminB.publicId,
      target: memberA.publicId,
      outcome: "failure",
      status: 404
    })
  })

  it("sign-ins, and failed ones with the public id tried (never a secret) or the role missing", async () => {
    const { entries } = await audit(global, "?action=ui.sign_in")
    expect(entries.map((entry) => [entry.actor, entry.outcome, entry.status]).sort()).toEqual(
      [[adminB.publicId, "failure", 401], [adminB.publicId, "success", 200], [memberA.publicId, "failure", 403]].sort()
    )
    expect(JSON.stringify(entries)).not.toContain("A".repeat(48))
    expect(entries.find((entry) => entry.status === 403).workspace).toBe("team-a")
  })

  it("the configuration reloaded, and keys made on the command line by the operator", async () => {
    const { entries } = await audit(global)
    expect(entries.find((entry) => entry.action === "config.reload")).toMatchObject({ actor: global.publicId, workspace: "default", outcome: "success" })
    const cli = entries.filter((entry) => entry.actor_kind === "cli" && entry.action === "api_key.create")
    expect(cli.map((entry) => entry.target).sort()).toEqual([adminA.publicId, adminB.publicId, memberA.publicId, global.publicId].sort())
    expect(cli.find((entry) => entry.target === adminB.publicId).workspace).toBe("team-b")
  })
})

describe("GET /v1/audit", () => {
  it("shows a workspace admin its workspace's entries only, and a global admin every workspace's or the one it names", async () => {
    for (const [key, workspace] of [[adminA, "team-a"], [adminB, "team-b"]] as const) {
      const { entries } = await audit(key)
      expect(entries.length).toBeGreaterThan(0)
      expect(new Set(entries.map((entry) => entry.workspace))).toEqual(new Set([workspace]))
    }
    const all = await audit(global)
    expect(new Set(all.entries.map((entry) => entry.workspace))).toEqual(new Set(["default", "team-a", "team-b"]))
    const onlyB = await audit(global, "?workspace=team-b")
    expect(onlyB.entries.every((entry) => entry.workspace === "team-b")).toBe(true)
    const refused = await call(gateway, "GET", "/v1/audit?workspace=team-b", { key: adminA })
    expect(refused.status).toBe(400)
    expect((await call(gateway, "GET", "/v1/audit", { key: memberA })).status).toBe(403)
  })

  it("filters on the actor, the action and a time range, newest first", async () => {
    const all = (await audit(global)).entries
    expect(all.map((entry) => entry.id)).toEqual([...all.map((entry) => entry.id)].sort().reverse())
    const byActor = (await audit(global, `?actor=${adminA.publicId}`)).entries
    expect(byActor.length).toBeGreaterThan(0)
    expect(byActor.every((entry) => entry.actor === adminA.publicId)).toBe(true)
    const future = new Date(Date.now() + 60_000).toISOString()
    expect((await audit(global, `?since=${future}`)).entries).toEqual([])
    expect((await audit(global, `?until=${future}`)).entries).toHaveLength(all.length)
    const bad = await call(gateway, "GET", "/v1/audit?since=yesterday", { key: global })
    expect(bad.status).toBe(400)
    expect(bad.body.error).toContain("since: expected an RFC 3339 time")
  })

  it("pages with next, and exports every matching entry as JSON Lines", async () => {
    const all = (await audit(global)).entries
    const seen: Array<string> = []
    let before = ""
    for (;;) {
      const page = await audit(global, `?limit=3${before}`)
      seen.push(...page.entries.map((entry) => entry.id))
      if (page.next === null) break
      before = `&before=${page.next}`
    }
    expect(seen).toEqual(all.map((entry) => entry.id))
    const exported = await call(gateway, "GET", "/v1/audit?format=jsonl&limit=2", { key: global })
    expect(exported.status).toBe(200)
    expect(exported.headers.get("content-type")).toContain("application/jsonl")
    const lines = exported.text.trim().split("\n").map((line) => JSON.parse(line))
    expect(lines.map((entry) => entry.id)).toEqual(all.map((entry) => entry.id))
    expect((await call(gateway, "GET", "/v1/audit?format=xml", { key: global })).status).toBe(400)
  })
})

describe("gateway audit list", () => {
  it("prints the entries as JSON Lines, newest first, filtered like the route; a bad flag is a usage error", async () => {
    const env = { env: { GATEWAY_RELATIONAL_DB_URL: database.url } }
    const listed = await runGateway(["audit", "list", "--workspace", "team-b", "--limit", "50"], env)
    expect(listed.code, listed.stderr).toBe(0)
    const lines = listed.stdout.trim().split("\n").map((line) => JSON.parse(line))
    expect(lines.map((entry) => entry.id)).toEqual((await audit(global, "?workspace=team-b&limit=50")).entries.map((entry) => entry.id))
    const bad = await runGateway(["audit", "list", "--since", "yesterday"], env)
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("--since: expected an RFC 3339 time")
  })
})

describe("the audit_log table", () => {
  it("refuses updates, deletions and truncation from the gateway's side", async () => {
    const count = await psql(database.url, "SELECT count(*) FROM audit_log")
    for (const statement of ["UPDATE audit_log SET outcome = 'success'", "DELETE FROM audit_log", "TRUNCATE audit_log"]) {
      await expect(psql(database.url, statement)).rejects.toThrow(/the audit log is append-only/)
    }
    expect(await psql(database.url, "SELECT count(*) FROM audit_log")).toBe(count)
  })
})
