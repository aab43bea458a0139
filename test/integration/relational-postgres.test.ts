/**
 * The relational store on Postgres (layers/postgres/relational.ts): one migration sequence
 * shared with the observability store, API keys, and rate limit buckets that are atomic and
 * all-or-nothing across the buckets of a call, also between several pools (several gateway
 * processes), never deadlock, and fail with a StoreError when the database is unreachable.
 * All of it also on the embedded database (PGlite behind pglite-socket), reached as Postgres;
 * there one open transaction holds the one session, so a row lock never times out.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { randomBytes } from "node:crypto"
import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makePgClient } from "../../layers/postgres/client.ts"
import { neverS } from "../../layers/postgres/rateLimitBuckets.ts"
import { makeRelationalStore, type RelationalStoreOptions } from "../../layers/postgres/relational.ts"
import { StoreError } from "../../src/storeError.ts"
import type { BucketRequest } from "../../src/ratelimit/rules.ts"
import type { RelationalStore } from "../../src/relational.ts"
import { freshDatabase, queryDatabase, type TestBackend, type TestDatabase } from "../support/databases.ts"
import { failure, openStore, run, serverOf } from "../support/storeFixtures.ts"
import { startTcpProxy } from "../support/tcpProxy.ts"

const migrations = ["0001_observability_tables", "0002_api_keys_and_rate_limits", "0003_cache_from_model_inference", "0004_rate_limit_bucket_expiry", "0005_model_inference_cost", "0006_embedding_inference", "0007_datapoints", "0008_evaluation_runs", "0009_workflow_evaluation_runs", "0010_batches", "0011_task_progress", "0012_dicl_examples", "0013_variant_sampling", "0014_task_checkpoint", "0015_api_key_roles", "0016_datapoint_first_version", "0017_ui_sessions", "0018_task_claims", "0019_model_inference_stream_chunking", "0020_task_runs", "0021_response_deletions", "0022_key_workspaces", "0023_data_workspaces", "0024_audit_log", "0025_budget_spend", "0026_budgets", "0027_ui_oidc", "0028_imported_keys", "0029_tensorzero_import"]

type PostgresBackend = Exclude<TestBackend, "clickhouse">

interface OpenRelational {
  readonly store: RelationalStore
  readonly close: () => Promise<void>
}

const openRelational = async (url: string, options?: RelationalStoreOptions): Promise<OpenRelational> => {
  const scope = Effect.runSync(Scope.make())
  const store = await Effect.runPromise(Scope.provide(scope)(makeRelationalStore(url, options)))
  return { store, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

/** a fresh, migrated database of `backend` and a store on it for the tests of the enclosing block */
const relationalSuite = (backend: PostgresBackend) => {
  const current: { database?: TestDatabase; opened?: OpenRelational } = {}
  beforeAll(async () => {
    current.database = await freshDatabase(backend)
    current.opened = await openRelational(current.database.url)
    await run(current.opened.store.migrate)
  })
  afterAll(async () => {
    await current.opened?.close()
    await current.database?.drop()
  })
  return {
    get database() {
      return current.database!
    },
    get store() {
      return current.opened!.store
    }
  }
}

/** bucket keys of their own for each test */
const keyFactory = () => {
  const prefix = randomBytes(4).toString("hex")
  return (name: string) => `${prefix}:${name}`
}

/** so slow a bucket does not visibly refill during a test */
const slow = 0.001

const bucket = (key: string, capacity: number, refillPerSecond: number, amount: number): BucketRequest => ({ key, capacity, refillPerSecond, amount })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** a local port nothing listens on */
const closedPort = async (): Promise<number> => {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const port = (server.address() as net.AddressInfo).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

const expectOneLine = (error: StoreError) => {
  expect(error).toBeInstanceOf(StoreError)
  expect(error.message).not.toMatch(/[\r\n]/)
}

// the Postgres server, and the embedded database reached as one (layers/embedded/pglite.ts)
describe.each(["postgres", "pglite"] as const)("relational store on %s", (backend) => {
  describe("migrations", () => {
    it("applies the one Postgres sequence once, whichever store migrates first, and nothing the second time", async () => {
      const database = await freshDatabase(backend)
      const relational = await openRelational(database.url)
      const observability = await openStore(backend, database.url)
      try {
        // before migrations, a clear one-line error
        const early = await failure(relational.store.keys.find("abcdefghijkl"))
        expectOneLine(early)
        expect(early.message).toMatch(/^postgres find api key failed: .*api_keys.* does not exist/)

        expect(await run(relational.store.migrate)).toEqual(migrations)
        expect(await run(relational.store.migrate)).toEqual([])
        expect(await run(observability.store.database.migrate)).toEqual([])
        expect(await queryDatabase(database, "SELECT version, name FROM gateway_migrations ORDER BY version")).toEqual(
          migrations.map((name) => ({ version: parseInt(name, 10), name }))
        )
        const tables = (await queryDatabase(database, "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'")).map((row) => row.name)
        expect(tables).toEqual(expect.arrayContaining(["api_keys", "rate_limit_buckets", "chat_inference", "gateway_migrations"]))
        await expect(run(relational.store.ping)).resolves.toBeUndefined()
        // both stores work on the one database
        await run(relational.store.keys.create({ publicId: "abcdefghijkl", secretHash: new Uint8Array([1]), workspace: "default" }))
        expect(await run(observability.store.inferences.listInferences("default", { limit: 10, offset: 0 }))).toEqual([])
      } finally {
        await relational.close()
        await observability.close()
        await database.drop()
      }
    })

    it("an observability store that migrated first leaves nothing for the relational store", async () => {
      const database = await freshDatabase(backend)
      const observability = await openStore(backend, database.url)
      const relational = await openRelational(database.url)
      try {
        expect(await run(observability.store.database.migrate)).toEqual(migrations)
        expect(await run(relational.store.migrate)).toEqual([])
        expect(await run(relational.store.keys.find("nobody000000"))).toBeUndefined()
      } finally {
        await relational.close()
        await observability.close()
        await database.drop()
      }
    })

    it("applies each migration once when stores of both kinds on several pools migrate at the same time", async () => {
      const database = await freshDatabase(backend)
      const relational = [await openRelational(database.url), await openRelational(database.url)]
      const observability = [await openStore(backend, database.url), await openStore(backend, database.url)]
      const stores = [...relational, ...observability]
      try {
        const migrate = [...relational.map((opened) => opened.store.migrate), ...observability.map((opened) => opened.store.database.migrate)]
        const results = await Promise.all([...migrate, ...migrate].map((effect) => run(effect)))
        expect(results.flat().sort()).toEqual(migrations)
        expect(await queryDatabase(database, "SELECT version FROM gateway_migrations ORDER BY version")).toEqual(migrations.map((name) => ({ version: parseInt(name, 10) })))
      } finally {
        for (const opened of stores) await opened.close()
        await database.drop()
      }
    })
  })

  describe("API keys", () => {
    const suite = relationalSuite(backend)

    it("finds a created key with its hash and times; optional times absent", async () => {
      const { keys } = suite.store
      const secretHash = new Uint8Array(randomBytes(32))
      const before = Date.now()
      await run(keys.create({ publicId: "key000000001", secretHash, workspace: "default" }))
      const found = await run(keys.find("key000000001"))
      expect(found).toStrictEqual({
        publicId: "key000000001",
        secretHash,
        createdAt: expect.any(Number),
        expiresAt: undefined,
        disabledAt: undefined,
        admin: false,
        workspace: "default",
        global: false,
        issuer: "gateway"
      })
      // the database's clock, close to ours
      expect(Math.abs(found!.createdAt - before)).toBeLessThan(5_000)
    })

    it("keeps the admin role, and lists every key newest first without its hash", async () => {
      const { keys } = suite.store
      await run(keys.create({ publicId: "keyadmin0001", secretHash: new Uint8Array([9]), admin: true, workspace: "default" }))
      expect((await run(keys.find("keyadmin0001")))?.admin).toBe(true)
      const listed = await run(keys.list(undefined))
      expect(listed[0]).toStrictEqual({
        publicId: "keyadmin0001",
        createdAt: expect.any(Number),
        expiresAt: undefined,
        disabledAt: undefined,
        admin: true,
        workspace: "default",
        global: false,
        issuer: "gateway"
      })
      expect(listed.find((key) => key.publicId === "key000000001")).toMatchObject({ admin: false })
      expect(listed.every((key) => !("secretHash" in key))).toBe(true)
    })

    it("keeps each key in its workspace: listed and disabled only there; a global admin is an admin", async () => {
      const { keys } = suite.store
      await run(keys.create({ publicId: "keyteama0001", secretHash: new Uint8Array([1]), workspace: "team-a" }))
      await run(keys.create({ publicId: "keyteamb0001", secretHash: new Uint8Array([2]), workspace: "team-b", admin: true }))
      await run(keys.create({ publicId: "keyglobal001", secretHash: new Uint8Array([3]), workspace: "default", global: true }))
      expect((await run(keys.list("team-a"))).map((key) => key.publicId)).toEqual(["keyteama0001"])
      expect((await run(keys.list("team-b")))[0]).toMatchObject({ publicId: "keyteamb0001", workspace: "team-b", admin: true, global: false })
      expect(await run(keys.find("keyglobal001"))).toMatchObject({ workspace: "default", admin: true, global: true })
      // another workspace's key is no key there
      expect(await run(keys.disable("keyteama0001", "team-b"))).toBe(false)
      expect((await run(keys.find("keyteama0001")))?.disabledAt).toBeUndefined()
      expect(await run(keys.disable("keyteama0001", "team-a"))).toBe(true)
      expect((await run(keys.find("keyteama0001")))?.disabledAt).toEqual(expect.any(Number))
      const workspaces = await run(keys.workspaces())
      expect(workspaces).toEqual([...workspaces].sort())
      expect(workspaces).toEqual(expect.arrayContaining(["default", "team-a", "team-b"]))
    })

    it("keeps the expiration to the millisecond", async () => {
      const { keys } = suite.store
      const expiresAt = Date.UTC(2031, 0, 2, 3, 4, 5, 678)
      await run(keys.create({ publicId: "key000000002", secretHash: new Uint8Array([0, 255, 7]), expiresAt, workspace: "default" }))
      expect(await run(keys.find("key000000002"))).toMatchObject({ expiresAt, disabledAt: undefined, secretHash: new Uint8Array([0, 255, 7]) })
    })

    it("answers undefined for an unknown key, also for ids Postgres could not store", async () => {
      const { keys } = suite.store
      expect(await run(keys.find("unknown00000"))).toBeUndefined()
      expect(await run(keys.find("nul\u0000nul"))).toBeUndefined()
      expect(await run(keys.find("lone\ud800"))).toBeUndefined()
      expect(await run(keys.find(""))).toBeUndefined()
    })

    it("disables a key once: true for a known key (also the second time, keeping the first time), false for an unknown one", async () => {
      const { keys } = suite.store
      await run(keys.create({ publicId: "key000000003", secretHash: new Uint8Array([3]), workspace: "default" }))
      const before = Date.now()
      expect(await run(keys.disable("key000000003"))).toBe(true)
      const disabled = await run(keys.find("key000000003"))
      expect(disabled?.disabledAt).toEqual(expect.any(Number))
      expect(Math.abs(disabled!.disabledAt! - before)).toBeLessThan(5_000)
      await sleep(20)
      expect(await run(keys.disable("key000000003"))).toBe(true)
      expect((await run(keys.find("key000000003")))?.disabledAt).toBe(disabled!.disabledAt)
      expect(await run(keys.disable("unknown00000"))).toBe(false)
      expect(await run(keys.disable("nul\u0000"))).toBe(false)
      // other keys untouched
      expect((await run(keys.find("key000000001")))?.disabledAt).toBeUndefined()
    })

    it("refuses a taken public id and invalid fields with a one-line StoreError", async () => {
      const { keys } = suite.store
      await run(keys.create({ publicId: "key000000004", secretHash: new Uint8Array([4]), workspace: "default" }))
      const taken = await failure(keys.create({ publicId: "key000000004", secretHash: new Uint8Array([5]), workspace: "default" }))
      expectOneLine(taken)
      expect(taken.message).toContain("key000000004 is taken")
      // the first key is kept
      expect((await run(keys.find("key000000004")))?.secretHash).toEqual(new Uint8Array([4]))
      for (
        const bad of [
          { publicId: "", secretHash: new Uint8Array(), workspace: "default" },
          { publicId: "x\u0000", secretHash: new Uint8Array(), workspace: "default" },
          { publicId: "key000000005", secretHash: new Uint8Array(), expiresAt: Number.NaN, workspace: "default" },
          { publicId: "key000000006", secretHash: new Uint8Array(), workspace: "" }
        ]
      ) {
        expectOneLine(await failure(keys.create(bad)))
      }
      expect(await run(keys.find("key000000005"))).toBeUndefined()
    })
  })

  describe("UI sessions", () => {
    const suite = relationalSuite(backend)
    const hash = () => new Uint8Array(randomBytes(32))

    it("finds a session's key as stored now until the session is deleted; an unknown hash finds nothing", async () => {
      const { keys, sessions } = suite.store
      await run(keys.create({ publicId: "sesadmin0001", secretHash: new Uint8Array([1]), admin: true, workspace: "default" }))
      const idHash = hash()
      await run(sessions.create({ idHash, publicId: "sesadmin0001", lifetimeS: 3600 }))
      expect(await run(sessions.find(idHash))).toStrictEqual({
        kind: "key",
        key: {
          publicId: "sesadmin0001",
          createdAt: expect.any(Number),
          expiresAt: undefined,
          disabledAt: undefined,
          admin: true,
          workspace: "default",
          global: false,
          issuer: "gateway"
        }
      })
      expect(await run(sessions.find(hash()))).toBeUndefined()
      await run(sessions.delete(idHash))
      expect(await run(sessions.find(idHash))).toBeUndefined()
      // deleting again is no failure
      await run(sessions.delete(idHash))
    })

    it("keeps a single sign-on identity's session (its workspace and role) until deleted", async () => {
      const { sessions } = suite.store
      const idHash = hash()
      const identity = { subject: "sub-alice", email: "alice@acme.com", workspace: "acme", role: "viewer" as const }
      await run(sessions.create({ idHash, identity, lifetimeS: 3600 }))
      expect(await run(sessions.find(idHash))).toStrictEqual({ kind: "oidc", identity })
      await run(sessions.delete(idHash))
      expect(await run(sessions.find(idHash))).toBeUndefined()
    })

    it("gives a sign-on under way once, and not after its lifetime", async () => {
      const { sessions } = suite.store
      const login = { stateHash: hash(), bindingHash: hash(), codeVerifier: "verifier", nonce: "nonce", returnTo: "/ui/" }
      await run(sessions.saveLogin(login, 600))
      expect(await run(sessions.takeLogin(login.stateHash))).toStrictEqual(login)
      expect(await run(sessions.takeLogin(login.stateHash))).toBeUndefined()
      const brief = { ...login, stateHash: hash() }
      await run(sessions.saveLogin(brief, 1))
      await sleep(1_100)
      expect(await run(sessions.takeLogin(brief.stateHash))).toBeUndefined()
    })

    it("answers the key's state of now (disabled), and ends a session at its lifetime on the database's clock", async () => {
      const { keys, sessions } = suite.store
      await run(keys.create({ publicId: "sesadmin0002", secretHash: new Uint8Array([2]), admin: true, workspace: "default" }))
      const [lasting, brief] = [hash(), hash()]
      await run(sessions.create({ idHash: lasting, publicId: "sesadmin0002", lifetimeS: 3600 }))
      await run(sessions.create({ idHash: brief, publicId: "sesadmin0002", lifetimeS: 1 }))
      expect(await run(sessions.find(brief))).toMatchObject({ kind: "key", key: { publicId: "sesadmin0002" } })
      await run(keys.disable("sesadmin0002"))
      const found = await run(sessions.find(lasting))
      expect(found?.kind === "key" ? found.key.disabledAt : undefined).toEqual(expect.any(Number))
      await sleep(1_100)
      expect(await run(sessions.find(brief))).toBeUndefined()
    })

    it("purges ended sessions and those of disabled keys when one is created", async () => {
      const { keys, sessions } = suite.store
      await run(keys.create({ publicId: "sesadmin0003", secretHash: new Uint8Array([3]), admin: true, workspace: "default" }))
      await run(keys.create({ publicId: "sesadmin0004", secretHash: new Uint8Array([4]), admin: true, workspace: "default" }))
      const [ending, ofDisabled, live] = [hash(), hash(), hash()]
      await run(sessions.create({ idHash: ending, publicId: "sesadmin0003", lifetimeS: 1 }))
      await run(sessions.create({ idHash: ofDisabled, publicId: "sesadmin0004", lifetimeS: 3600 }))
      await run(sessions.create({ idHash: live, publicId: "sesadmin0003", lifetimeS: 3600 }))
      await run(keys.disable("sesadmin0004"))
      await sleep(1_100)
      await run(sessions.create({ idHash: hash(), publicId: "sesadmin0003", lifetimeS: 3600 }))
      const stored = (await queryDatabase(suite.database, "SELECT encode(id_hash, 'hex') AS id FROM ui_sessions")).map((row) => row.id)
      const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex")
      expect(stored).toContain(hex(live))
      expect(stored).not.toContain(hex(ending))
      expect(stored).not.toContain(hex(ofDisabled))
    })

    it("refuses a session of no key and a lifetime that is not a positive whole number of seconds, with a one-line StoreError", async () => {
      const { sessions } = suite.store
      const noKey = await failure(sessions.create({ idHash: hash(), publicId: "nobody000000", lifetimeS: 60 }))
      expectOneLine(noKey)
      expect(noKey.message).toMatch(/^postgres create ui session failed: /)
      for (const lifetimeS of [0, -1, 1.5, Number.NaN]) {
        expectOneLine(await failure(sessions.create({ idHash: hash(), publicId: "sesadmin0001", lifetimeS })))
      }
    })
  })

  describe("buckets", () => {
    const suite = relationalSuite(backend)

    it("a new bucket starts full and refuses what it does not hold", async () => {
      const { buckets } = suite.store
      const key = keyFactory()
      expect(buckets.backend).toBe("postgres")
      expect(await run(buckets.consume([bucket(key("a"), 5, slow, 5)]))).toEqual({ ok: true })
      const refused = await run(buckets.consume([bucket(key("a"), 5, slow, 1)]))
      expect(refused).toEqual({ ok: false, index: 0, available: expect.closeTo(0, 3), retryAfterS: 1000 })
      // an empty call takes nothing
      expect(await run(buckets.consume([]))).toEqual({ ok: true })
      await run(buckets.adjust([]))
    })

    it("refills at its rate up to its capacity, on the database's clock", async () => {
      const { buckets } = suite.store
      const key = keyFactory()
      const fast = (amount: number) => [bucket(key("fast"), 2, 20, amount)]
      expect(await run(buckets.consume(fast(2)))).toEqual({ ok: true })
      const empty = await run(buckets.consume(fast(2)))
      expect(empty.ok).toBe(false)
      await sleep(150) // 3 tokens' worth of time
      expect(await run(buckets.consume(fast(2)))).toEqual({ ok: true })
      await sleep(300) // 6 tokens' worth, capped at 2
      // more than the capacity is refused, with the time it would take anyway
      expect(await run(buckets.consume(fast(3)))).toEqual({ ok: false, index: 0, available: 2, retryAfterS: 1 })
      expect(await run(buckets.consume(fast(2)))).toEqual({ ok: true })
    })

    it("takes from every bucket or from none: a short bucket keeps the others from being charged", async () => {
      const { buckets } = suite.store
      const key = keyFactory()
      const refused = await run(buckets.consume([bucket(key("a"), 10, slow, 3), bucket(key("short"), 1, 0.5, 2), bucket(key("c"), 10, slow, 3)]))
      expect(refused).toEqual({ ok: false, index: 1, available: 1, retryAfterS: 2 })
      // a and c are still full
      expect(await run(buckets.consume([bucket(key("a"), 10, slow, 10), bucket(key("c"), 10, slow, 10)]))).toEqual({ ok: true })
      expect(await run(buckets.consume([bucket(key("c"), 10, slow, 1)]))).toMatchObject({ ok: false, index: 0 })
    })

    it("names the first short bucket in the order given, what it holds, and when it will hold enough", async () => {
      const { buckets } = suite.store
      const key = keyFactory()
      await run(buckets.consume([bucket(key("x"), 10, 4, 7)])) // x holds 3
      const refused = await run(buckets.consume([
        bucket(key("y"), 10, slow, 1),
        bucket(key("x"), 10, 4, 8), // short by ~5: 2 s at 4/s
        bucket(key("z"), 1, slow, 2) // short too, but later
      ]))
      expect(refused).toMatchObject({ ok: false, index: 1, retryAfterS: 2 })
      if (refused.ok) throw new Error("unreachable")
      expect(refused.available).toBeGreaterThanOrEqual(3)
      expect(refused.available).toBeLessThan(4)
      // a bucket that never refills
      expect(await run(buckets.consume([bucket(key("never"), 1, 0, 2)]))).toEqual({ ok: false, index: 0, available: 1, retryAfterS: neverS })
      // a key named twice is one bucket: both amounts come from it
      expect(await run(buckets.consume([bucket(key("twice"), 5, slow, 3), bucket(key("twice"), 5, slow, 3)]))).toMatchObject({ ok: false, index: 1, available: expect.closeTo(2, 3) })
      expect(await run(buckets.consume([bucket(key("twice"), 5, slow, 2.5), bucket(key("twice"), 5, slow, 2.5)]))).toEqual({ ok: true })
    })

    it("adjust gives back up to the capacity, never above", async () => {
      const { buckets } = suite.store
      const key = keyFactory()
      const a = (amount: number) => [bucket(key("a"), 5, slow, amount)]
      expect(await run(buckets.consume(a(2)))).toEqual({ ok: true })
      await run(buckets.adjust(a(-10)))
      expect(await run(buckets.consume(a(5)))).toEqual({ ok: true })
      expect(await run(buckets.consume(a(0.5)))).toMatchObject({ ok: false, available: expect.closeTo(0, 3) })
      // adjust on a missing bucket: it starts full
      await run(buckets.adjust([bucket(key("new"), 5, slow, 4)]))
      expect(await run(buckets.consume([bucket(key("new"), 5, slow, 1.5)]))).toMatchObject({ ok: false, available: expect.closeTo(1, 3) })
    })

    it("adjust may leave a debt below zero, which delays the next consume until it is refilled", async () => {
      const { buckets } = suite.store
      const key = keyFactory()
      const d = (amount: number) => [bucket(key("debt"), 5, 5, amount)]
      expect(await run(buckets.consume(d(5)))).toEqual({ ok: true })
      await run(buckets.adjust(d(5))) // used 10 where 5 were borrowed: -5
      const refused = await run(buckets.consume(d(1)))
      expect(refused).toMatchObject({ ok: false, index: 0, retryAfterS: 2 })
      if (refused.ok) throw new Error("unreachable")
      expect(refused.available).toBeLessThan(-4)
      await sleep(300) // about -3.5 now, and 1 only after 1.2 s
      expect(await run(buckets.consume(d(1)))).toMatchObject({ ok: false })
      await sleep(1_000) // about +1.5
      expect(await run(buckets.consume(d(1)))).toEqual({ ok: true })
    })

    it("keeps buckets with keys Postgres text cannot hold apart (NUL, lone surrogates, backslashes, very long keys)", async () => {
      const { buckets } = suite.store
      const key = keyFactory()
      const long = "x".repeat(10_000)
      const odd = [
        "a\u0000", "a\\0", "a\\\\0", "a\\", "a",
        "s\ud800", "s\ufffd", "s\\ud800", "s\udc00\ud800", "pair 🎉",
        `${long}1`, `${long}2`, `\\h${long}`
      ].map(key)
      // a collision would make the second bucket of a pair refuse
      for (const name of odd) expect(await run(buckets.consume([bucket(name, 1, slow, 1)])), JSON.stringify(name.slice(0, 40))).toEqual({ ok: true })
      for (const name of odd) expect(await run(buckets.consume([bucket(name, 1, slow, 1)]))).toMatchObject({ ok: false })
    })

    it("refuses invalid requests with a StoreError before asking the database", async () => {
      // a store whose database is unreachable: the error names the request, not the connection
      const closed = await openRelational(`postgres://postgres@127.0.0.1:${await closedPort()}/nothing`)
      try {
        const invalid: Array<[BucketRequest, string]> = [
          [bucket("k", Number.NaN, 1, 1), "capacity"],
          [bucket("k", 0, 1, 1), "capacity"],
          [bucket("k", -1, 1, 1), "capacity"],
          [bucket("k", Number.POSITIVE_INFINITY, 1, 1), "capacity"],
          [bucket("k", 1, -1, 1), "refill rate"],
          [bucket("k", 1, Number.NaN, 1), "refill rate"],
          [bucket("k", 1, 1, Number.POSITIVE_INFINITY), "amount"],
          [bucket("k", 1, 1, -1), "amount"]
        ]
        for (const [request, field] of invalid) {
          const error = await failure(closed.store.buckets.consume([bucket("ok", 1, 1, 1), request]))
          expectOneLine(error)
          expect(error.message).toMatch(new RegExp(`^postgres consume failed: bucket 1: the ${field}`))
        }
        // adjust takes negative amounts, nothing else invalid
        expect((await failure(closed.store.buckets.adjust([bucket("k", 1, 1, Number.NaN)]))).message).toMatch(/^postgres adjust failed: bucket 0: the amount/)
        expect((await failure(closed.store.buckets.adjust([bucket("k", 0, 1, -1)]))).message).toMatch(/^postgres adjust failed: bucket 0: the capacity/)
        expect((await failure(closed.store.buckets.adjust([bucket("k", 1, 1, -1)]))).message).toMatch(/^postgres adjust failed: .*(ECONNREFUSED|connect)/i)
      } finally {
        await closed.close()
      }
    })
  })

  describe("atomicity under concurrency", () => {
    const suite = relationalSuite(backend)

    it("40 parallel consumes of 1 from a bucket of 10 let exactly 10 through", async () => {
      const key = keyFactory()
      const results = await Promise.all(Array.from({ length: 40 }, () => run(suite.store.buckets.consume([bucket(key("ten"), 10, 1e-9, 1)]))))
      expect(results.filter((result) => result.ok)).toHaveLength(10)
    })

    it("two stores (two pools, as two gateway processes) sharing the buckets let exactly 10 through together", async () => {
      const key = keyFactory()
      const other = await openRelational(suite.database.url)
      try {
        const stores = [suite.store, other.store]
        const results = await Promise.all(
          Array.from({ length: 40 }, (_, i) => run(stores[i % 2].buckets.consume([bucket(key("shared"), 10, 1e-9, 1), bucket(key("wide"), 100, 1e-9, 1)])))
        )
        expect(results.filter((result) => result.ok)).toHaveLength(10)
        // the wide bucket was charged exactly by the calls that passed
        expect(await run(other.store.buckets.consume([bucket(key("wide"), 100, 1e-9, 90)]))).toEqual({ ok: true })
        expect(await run(suite.store.buckets.consume([bucket(key("wide"), 100, 1e-9, 0.5)]))).toMatchObject({ ok: false })
      } finally {
        await other.close()
      }
    })

    it("overlapping bucket sets named in opposite orders by parallel calls never deadlock", async () => {
      const key = keyFactory()
      const other = await openRelational(suite.database.url)
      try {
        const stores = [suite.store, other.store]
        const names = ["a", "b", "c", "d", "e"].map(key)
        const big = (name: string, amount: number) => bucket(name, 1_000_000, 1e-9, amount)
        // buckets are created by the first calls that name them, in any order
        const calls = Array.from({ length: 120 }, (_, i) => {
          const store = stores[i % 2]
          const set = i % 3 === 0 ? names : i % 3 === 1 ? [...names].reverse() : [names[4], names[1], names[3], names[0]]
          return i % 4 === 3
            ? run(store.buckets.adjust(set.map((name) => big(name, 1))))
            : run(store.buckets.consume(set.map((name) => big(name, 1)))).then((result) => expect(result).toEqual({ ok: true }))
        })
        await Promise.all(calls)
        // every call charged each of its buckets once
        const rows = await queryDatabase(suite.database, `SELECT key, tokens FROM rate_limit_buckets WHERE key LIKE '${key("")}%' ORDER BY key`)
        const expected = Object.fromEntries(names.map((name) => [name, 0]))
        for (let i = 0; i < 120; i++) {
          const set = i % 3 === 2 ? [names[4], names[1], names[3], names[0]] : names
          for (const name of set) expected[name]++
        }
        expect(rows.map((row) => ({ key: row.key, used: Math.round(1_000_000 - row.tokens) }))).toEqual(
          names.map((name) => ({ key: name, used: expected[name] }))
        )
      } finally {
        await other.close()
      }
    })
  })

  describe("an unreachable database", () => {
    const suite = relationalSuite(backend)

    it("every operation fails with a one-line StoreError within seconds when nothing listens", async () => {
      const { store, close } = await openRelational(`postgres://postgres@127.0.0.1:${await closedPort()}/nothing`)
      try {
        const started = Date.now()
        const errors = await Promise.all([
          failure(store.migrate),
          failure(store.ping),
          failure(store.keys.create({ publicId: "key000000009", secretHash: new Uint8Array([9]), workspace: "default" })),
          failure(store.keys.disable("key000000009")),
          failure(store.keys.find("key000000009")),
          failure(store.buckets.consume([bucket("k", 1, 1, 1)])),
          failure(store.buckets.adjust([bucket("k", 1, 1, 1)]))
        ])
        expect(Date.now() - started).toBeLessThan(5_000)
        for (const error of errors) {
          expectOneLine(error)
          expect(error.message).toMatch(/^postgres \w[\w ]* failed: /)
        }
      } finally {
        await close()
      }
    })

    it("fails within seconds while the database is cut off, and works again once it is back", async () => {
      const proxy = await startTcpProxy(serverOf(suite.database))
      const { store, close } = await openRelational(proxy.urlFor(suite.database.url))
      const key = keyFactory()
      try {
        expect(await run(store.buckets.consume([bucket(key("p"), 10, slow, 1)]))).toEqual({ ok: true })
        proxy.cut()
        const started = Date.now()
        const errors = await Promise.all([
          failure(store.buckets.consume([bucket(key("p"), 10, slow, 1)])),
          failure(store.keys.find("key000000001")),
          failure(store.ping)
        ])
        expect(Date.now() - started).toBeLessThan(5_000)
        for (const error of errors) expectOneLine(error)
        proxy.restore()
        // the pool opens new connections: the first attempt may still meet a connection closed by the cut
        const again = () => Effect.runPromise(Effect.exit(store.buckets.consume([bucket(key("p"), 10, slow, 1)])))
        let result = await again()
        if (Exit.isFailure(result)) result = await again()
        expect(result).toEqual(Exit.succeed({ ok: true }))
      } finally {
        await close()
        await proxy.close()
      }
    })

    /** a transaction of another client holding the bucket's row for 1.5 s, once it holds it; `released` once it ended */
    const holdRow = async (scope: Scope.Scope, bucketKey: string) => {
      const sql = await Effect.runPromise(Scope.provide(scope)(makePgClient(suite.database.url)))
      let locked!: () => void
      const isLocked = new Promise<void>((resolve) => (locked = resolve))
      const holder = Effect.runPromise(sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT 1 FROM rate_limit_buckets WHERE key = ${bucketKey} FOR UPDATE`
        locked()
        yield* Effect.sleep("1500 millis")
      })))
      await isLocked
      // in an object: an async function returning the promise itself would wait for it
      return { released: holder }
    }

    // the embedded database has one session, which an open transaction holds whole: another
    // client's call waits for it to end (in pglite-socket's queue, not on a row lock) and then
    // runs; PGlite enforces no statement timeout either (no timer signals in WebAssembly)
    if (backend === "pglite") {
      it("runs a call made during another client's transaction once that transaction ends", async () => {
        const key = keyFactory()
        const { store, close } = await openRelational(suite.database.url, { statementTimeout: 300 })
        const scope = Effect.runSync(Scope.make())
        try {
          expect(await run(store.buckets.consume([bucket(key("locked"), 10, slow, 1)]))).toEqual({ ok: true })
          const { released } = await holdRow(scope, key("locked"))
          const started = Date.now()
          expect(await run(store.buckets.consume([bucket(key("locked"), 10, slow, 1)]))).toEqual({ ok: true })
          expect(Date.now() - started).toBeGreaterThanOrEqual(1_000)
          await released
          // both calls took their token
          expect(await run(store.buckets.consume([bucket(key("locked"), 10, slow, 8)]))).toEqual({ ok: true })
          expect(await run(store.buckets.consume([bucket(key("locked"), 10, slow, 1)]))).toMatchObject({ ok: false })
        } finally {
          await Effect.runPromise(Scope.close(scope, Exit.void))
          await close()
        }
      })
    } else {
      it("gives up on a call that waits on a stuck lock after the statement timeout", async () => {
        const key = keyFactory()
        const { store, close } = await openRelational(suite.database.url, { statementTimeout: 300 })
        const scope = Effect.runSync(Scope.make())
        try {
          expect(await run(store.buckets.consume([bucket(key("locked"), 10, slow, 1)]))).toEqual({ ok: true })
          // another session holds the bucket's row for a while
          const { released } = await holdRow(scope, key("locked"))
          const started = Date.now()
          const error = await failure(store.buckets.consume([bucket(key("locked"), 10, slow, 1)]))
          expect(Date.now() - started).toBeLessThan(1_200)
          expectOneLine(error)
          expect(error.message).toMatch(/^postgres consume failed: .*statement timeout/)
          await released
          // nothing was taken by the call that gave up
          expect(await run(store.buckets.consume([bucket(key("locked"), 10, slow, 9)]))).toEqual({ ok: true })
        } finally {
          await Effect.runPromise(Scope.close(scope, Exit.void))
          await close()
        }
      })
    }
  })
})
