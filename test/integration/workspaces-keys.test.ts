/**
 * Workspaces, the keys' side (issue 39): `--create-api-key --workspace <name>` and `--admin
 * --global`, the workspace a request acts on (its key's own; a global admin's from the
 * `gateway-workspace` header), the UI's key routes kept inside the admin's workspace, and
 * `/v1/ui/workspaces` for global admins only; over HTTP with the real command line on a real
 * Postgres. Keys made before workspaces (rows without the column's value) are in `default`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ApiKey, call, createKey, dummyInference, insertKeys, keyPattern, parseKey } from "../support/access.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, runGateway, startGateway } from "../support/gateway.ts"

let database: TestDatabase
let secured: RunningGateway
let open: RunningGateway
let memberA: ApiKey
let adminA: ApiKey
let memberB: ApiKey
let adminB: ApiKey
let global: ApiKey
let older: ApiKey

const asWorkspace = (workspace: string) => ({ "gateway-workspace": workspace })
const keyIds = (body: any): Array<string> => body.api_keys.map((key: any) => key.public_id)

beforeAll(async () => {
  database = await freshDatabase("postgres")
  // made first: the migrations run, and this key's row is written as a gateway before workspaces wrote it
  memberA = await createKey(database.url, ["--workspace", "team-a"])
  ;[older] = await insertKeys(database.url, 1)
  ;[adminA, memberB, adminB, global] = await Promise.all([
    createKey(database.url, ["--admin", "--workspace", "team-a"]),
    createKey(database.url, ["--workspace", "team-b"]),
    runGateway(["api-key", "create", "--admin", "--workspace", "team-b"], { env: { GATEWAY_RELATIONAL_DB_URL: database.url } }).then((result) => {
      expect(result.code, result.stderr).toBe(0)
      return parseKey(result.stdout.trim())
    }),
    createKey(database.url, ["--admin", "--global"])
  ])
  const env = { GATEWAY_RELATIONAL_DB_URL: database.url }
  ;[secured, open] = await Promise.all([
    startGateway({ config: "[gateway.auth]\nenabled = true\n", env }),
    startGateway({ config: "", env })
  ])
})
afterAll(async () => {
  await Promise.all([secured?.stop(), open?.stop()])
  await database?.drop()
})

describe("the command line", () => {
  it("refuses --global without --admin, --global with --workspace, and a bad workspace name, before storing anything", async () => {
    const env = { env: { GATEWAY_RELATIONAL_DB_URL: database.url } }
    const before = (await call(secured, "GET", "/v1/ui/workspaces", { key: global })).body.workspaces
    const noAdmin = await runGateway(["--create-api-key", "--global"], env)
    expect(noAdmin.code).toBe(2)
    expect(noAdmin.stderr).toContain("--global goes with --admin")
    const both = await runGateway(["api-key", "create", "--admin", "--global", "--workspace", "team-z"], env)
    expect(both.code).toBe(2)
    expect(both.stderr).toContain("--global and --workspace exclude each other")
    const badName = await runGateway(["--create-api-key", "--workspace", "team z"], env)
    expect(badName.code).toBe(1)
    expect(badName.stderr).toContain(`--workspace: "team z" is not a workspace name (1 to 64 characters`)
    expect(noAdmin.stdout + both.stdout + badName.stdout).not.toMatch(/sk-gw-/)
    const stray = await runGateway(["--disable-api-key", memberA.publicId, "--workspace", "team-a"], env)
    expect(stray.code).toBe(2)
    expect(stray.stderr).toContain("--workspace goes with --create-api-key")
    expect((await call(secured, "GET", "/v1/ui/workspaces", { key: global })).body.workspaces).toEqual(before)
  })
})

describe("the workspace a request acts on", () => {
  it("is its key's own: a header naming it passes, another workspace is a 403 naming both, a malformed name a 400", async () => {
    expect((await call(secured, "POST", "/inference", { key: memberA, body: dummyInference() })).status).toBe(200)
    expect((await call(secured, "POST", "/inference", { key: memberA, body: dummyInference(), headers: asWorkspace("team-a") })).status).toBe(200)
    const other = await call(secured, "POST", "/inference", { key: memberA, body: dummyInference(), headers: asWorkspace("team-b") })
    expect(other.status).toBe(403)
    expect(other.body.error).toContain(`API key ${memberA.publicId} belongs to workspace "team-a"`)
    expect(other.body.error).toContain(`"team-b"`)
    const malformed = await call(secured, "POST", "/inference", { key: memberA, body: dummyInference(), headers: asWorkspace("team/a") })
    expect(malformed.status).toBe(400)
    expect(malformed.body.error).toMatch(/^the gateway-workspace header: "team\/a" is not a workspace name/)
    // the OpenAI surface answers in its own shape
    const openai = await call(secured, "POST", "/openai/v1/chat/completions", {
      key: memberB,
      body: { model: "gateway::model_name::dummy::hello", messages: [{ role: "user", content: "Hi" }] },
      headers: asWorkspace("team-a")
    })
    expect(openai.status).toBe(403)
    expect(openai.body.error.message).toContain(`belongs to workspace "team-b"`)
  })

  it("is any workspace a global admin's header names, default without one", async () => {
    for (const headers of [{}, asWorkspace("team-a"), asWorkspace("brand-new")]) {
      expect((await call(secured, "POST", "/inference", { key: global, body: dummyInference(), headers })).status).toBe(200)
    }
  })
})

describe("the UI's key routes", () => {
  it("show a workspace admin only its workspace's keys, with their workspace and role", async () => {
    const listed = await call(secured, "GET", "/v1/ui/api_keys", { key: adminA })
    expect(listed.status).toBe(200)
    expect(keyIds(listed.body).sort()).toEqual([memberA.publicId, adminA.publicId].sort())
    expect(listed.body.api_keys.find((key: any) => key.public_id === adminA.publicId)).toMatchObject({ workspace: "team-a", admin: true, global: false })
    const forB = await call(secured, "GET", "/v1/ui/api_keys", { key: adminB })
    expect(keyIds(forB.body).sort()).toEqual([memberB.publicId, adminB.publicId].sort())
    // naming another workspace does not widen the view
    expect((await call(secured, "GET", "/v1/ui/api_keys", { key: adminA, headers: asWorkspace("team-b") })).status).toBe(403)
    // a member is no admin of its workspace
    expect((await call(secured, "GET", "/v1/ui/api_keys", { key: memberA })).status).toBe(403)
  })

  it("make a workspace admin's new key in its workspace, and refuse it a global admin", async () => {
    const created = await call(secured, "POST", "/v1/ui/api_keys", { key: adminA, body: {} })
    expect(created.status, created.text).toBe(200)
    expect(created.body).toMatchObject({ workspace: "team-a", admin: false, global: false })
    expect(created.body.api_key).toMatch(keyPattern)
    const made = parseKey(created.body.api_key)
    expect(keyIds((await call(secured, "GET", "/v1/ui/api_keys", { key: adminA })).body)).toContain(made.publicId)
    expect(keyIds((await call(secured, "GET", "/v1/ui/api_keys", { key: adminB })).body)).not.toContain(made.publicId)
    const refused = await call(secured, "POST", "/v1/ui/api_keys", { key: adminA, body: { global: true } })
    expect(refused.status).toBe(403)
    expect(refused.body.error).toContain("only a global admin may make a global admin")
  })

  it("answer another workspace's key exactly as a key that does not exist, and leave it working", async () => {
    const foreign = await call(secured, "POST", `/v1/ui/api_keys/${memberB.publicId}/disable`, { key: adminA })
    const unknown = await call(secured, "POST", "/v1/ui/api_keys/zzzzzzzzzzzz/disable", { key: adminA })
    expect(foreign.status).toBe(404)
    expect(unknown.status).toBe(404)
    expect(foreign.body).toEqual({ error: `no API key has the public id ${memberB.publicId}` })
    expect(unknown.body).toEqual({ error: "no API key has the public id zzzzzzzzzzzz" })
    expect((await call(secured, "POST", "/inference", { key: memberB, body: dummyInference() })).status).toBe(200)
  })

  it("give a global admin the workspace its header names: listed, created in and disabled in there", async () => {
    const inB = await call(secured, "GET", "/v1/ui/api_keys", { key: global, headers: asWorkspace("team-b") })
    expect(keyIds(inB.body).sort()).toEqual([memberB.publicId, adminB.publicId].sort())
    const created = await call(secured, "POST", "/v1/ui/api_keys", { key: global, headers: asWorkspace("team-c"), body: { admin: true } })
    expect(created.status, created.text).toBe(200)
    expect(created.body).toMatchObject({ workspace: "team-c", admin: true, global: false })
    const adminC = parseKey(created.body.api_key)
    expect(keyIds((await call(secured, "GET", "/v1/ui/api_keys", { key: adminC })).body)).toEqual([adminC.publicId])
    const anotherGlobal = await call(secured, "POST", "/v1/ui/api_keys", { key: global, body: { global: true } })
    expect(anotherGlobal.body).toMatchObject({ workspace: "default", admin: true, global: true })
    // without a header, a global admin is in default, where the keys made before workspaces are
    const inDefault = keyIds((await call(secured, "GET", "/v1/ui/api_keys", { key: global })).body)
    expect(inDefault).toEqual(expect.arrayContaining([global.publicId, older.publicId]))
    expect(inDefault).not.toContain(memberA.publicId)
  })

  it("list the workspaces for a global admin only", async () => {
    const listed = await call(secured, "GET", "/v1/ui/workspaces", { key: global })
    expect(listed.status).toBe(200)
    expect(listed.body.workspaces).toEqual(expect.arrayContaining(["default", "team-a", "team-b", "team-c"]))
    expect(listed.body.workspaces).toEqual([...listed.body.workspaces].sort())
    for (const key of [adminA, memberB]) {
      const refused = await call(secured, "GET", "/v1/ui/workspaces", { key })
      expect(refused.status).toBe(403)
      expect(refused.body.error).toContain("listing the workspaces")
    }
  })

  it("sign a workspace admin in with its workspace and role, and a global admin as global", async () => {
    const signIn = (key: ApiKey) => call(secured, "POST", "/v1/ui/session", { body: { api_key: key.key } })
    expect((await signIn(adminB)).body).toEqual({ authentication: true, signed_in: true, public_id: adminB.publicId, workspace: "team-b", role: "admin" })
    expect((await signIn(global)).body).toEqual({ authentication: true, signed_in: true, public_id: global.publicId, workspace: "default", role: "global" })
  })

  it("without authentication, act on the header's workspace", async () => {
    const inA = await call(open, "GET", "/v1/ui/api_keys", { headers: asWorkspace("team-a") })
    expect(inA.status).toBe(200)
    expect(keyIds(inA.body)).toEqual(expect.arrayContaining([memberA.publicId, adminA.publicId]))
    expect(keyIds(inA.body)).not.toContain(memberB.publicId)
    expect((await call(open, "GET", "/v1/ui/workspaces")).status).toBe(200)
    expect((await call(open, "GET", "/v1/ui/api_keys", { headers: asWorkspace("") })).status).toBe(400)
  })
})
