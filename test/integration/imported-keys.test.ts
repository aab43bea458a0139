/**
 * Keys imported from TensorZero (issue 40), on Postgres and on the embedded database: imported
 * through the key store (`importKeys`, as `gateway import-tensorzero` does), then used over HTTP
 * against a gateway with authentication on. A TensorZero key works exactly as TensorZero issued
 * it (`sk-t0-`, its mixed-case public id as written); with the id's case changed or with this
 * gateway's prefix it is refused; disabled and expired keys stay refused; a re-import disables a
 * key TensorZero disabled since, never re-enables one disabled here, and never overwrites a key
 * this gateway issued.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { createHash, randomInt } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeRelationalStore } from "../../layers/postgres/relational.ts"
import type { ImportedApiKey } from "../../src/auth/store.ts"
import type { RelationalStore } from "../../src/relational.ts"
import { type ApiKey, call, createKey, dummyInference } from "../support/access.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { observabilityToml } from "../support/observability.ts"

// no key cache: a change in the database shows on the next request
const config = `
${observabilityToml()}
[gateway.auth]
enabled = true
cache_ttl_ms = 0
`

const alphanumerics = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
const randomSecret = () => Array.from({ length: 48 }, () => alphanumerics[randomInt(alphanumerics.length)]).join("")

/** a key as TensorZero issued it: its text, and its row as the import reads it (TensorZero's hex hash decoded) */
const tensorZeroKey = (publicId: string, row: Partial<ImportedApiKey> = {}) => {
  const secret = randomSecret()
  const hexHash = createHash("sha256").update(secret).digest("hex")
  const imported: ImportedApiKey = {
    publicId,
    secretHash: Buffer.from(hexHash, "hex"),
    createdAt: Date.UTC(2026, 0, 15),
    workspace: "default",
    ...row
  }
  return { text: `sk-t0-${publicId}-${secret}`, secret, imported }
}

describe.each(["postgres", "pglite"] as const)("keys imported from TensorZero, on %s", (backend) => {
  let database: TestDatabase
  let scope: Scope.Closeable
  let store: RelationalStore
  let gateway: RunningGateway
  let admin: ApiKey

  const importKeys = (keys: ReadonlyArray<ImportedApiKey>) => Effect.runPromise(store.keys.importKeys(keys))
  const statusWith = async (key: string) => {
    const answer = await call(gateway, "POST", "/inference", { key, body: dummyInference() })
    return { status: answer.status, message: answer.body?.error as string | undefined }
  }

  beforeAll(async () => {
    database = await freshDatabase(backend)
    scope = Effect.runSync(Scope.make())
    store = await Effect.runPromise(Scope.provide(scope)(makeRelationalStore(database.url)))
    await Effect.runPromise(store.migrate)
    admin = await createKey(database.url, ["--admin"])
    gateway = await startGateway({ config, env: { GATEWAY_RELATIONAL_DB_URL: database.url, GATEWAY_ANALYTICS_DB_URL: database.url } })
  })
  afterAll(async () => {
    await gateway?.stop()
    if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
    await database?.drop()
  })

  it("authenticates a key as TensorZero issued it, and refuses it with the id's case changed or with this gateway's prefix", async () => {
    const live = tensorZeroKey("Tz7LiveKeyAb", { description: "production app" })
    expect(await importKeys([live.imported])).toEqual({ inserted: 1, updated: 0, refused: 0, refusedPublicIds: [] })

    expect((await statusWith(live.text)).status).toBe(200)
    expect(await statusWith(`sk-t0-tz7livekeyab-${live.secret}`)).toEqual({ status: 401, message: "unknown API key" })
    expect(await statusWith(`sk-t0-TZ7LIVEKEYAB-${live.secret}`)).toEqual({ status: 401, message: "unknown API key" })
    // a gateway key's public id is lowercase: this one is malformed as an sk-gw- key
    expect((await statusWith(`sk-gw-Tz7LiveKeyAb-${live.secret}`)).status).toBe(401)

    // the key list shows who issued each key, and TensorZero's description
    const listed = await call(gateway, "GET", "/v1/ui/api_keys", { key: admin })
    expect(listed.status, listed.text).toBe(200)
    const byId = new Map(listed.body.api_keys.map((key: { public_id: string }) => [key.public_id, key]))
    expect(byId.get("Tz7LiveKeyAb")).toMatchObject({
      issuer: "tensorzero",
      description: "production app",
      created_at: "2026-01-15T00:00:00.000Z",
      expires_at: null,
      disabled_at: null
    })
    expect(byId.get(admin.publicId)).toMatchObject({ issuer: "gateway" })
    expect(byId.get(admin.publicId)).not.toHaveProperty("description")
  })

  it("refuses a TensorZero key with this gateway's prefix even when its public id is lowercase", async () => {
    const lower = tensorZeroKey("tz7lowerkey1")
    expect((await importKeys([lower.imported])).inserted).toBe(1)
    expect((await statusWith(lower.text)).status).toBe(200)
    expect(await statusWith(`sk-gw-tz7lowerkey1-${lower.secret}`)).toEqual({ status: 401, message: "unknown API key" })
  })

  it("refuses imported keys that were disabled or have expired", async () => {
    const disabledAt = Date.UTC(2026, 2, 1)
    const expiresAt = Date.UTC(2026, 3, 1, 12)
    const disabled = tensorZeroKey("Tz7Disabled1", { disabledAt })
    const expired = tensorZeroKey("Tz7Expired01", { expiresAt })
    expect((await importKeys([disabled.imported, expired.imported])).inserted).toBe(2)
    expect(await statusWith(disabled.text)).toEqual({ status: 401, message: "API key Tz7Disabled1 is disabled" })
    expect(await statusWith(expired.text)).toEqual({ status: 401, message: `API key Tz7Expired01 expired at ${new Date(expiresAt).toISOString()}` })
  })

  it("brings keys up to date on a re-import: a key TensorZero disabled since stops working, one disabled here stays disabled", async () => {
    const later = tensorZeroKey("Tz7LaterOff1", { description: "old" })
    const kept = tensorZeroKey("Tz7KeptOff01")
    expect((await importKeys([later.imported, kept.imported])).inserted).toBe(2)
    expect((await statusWith(later.text)).status).toBe(200)
    // unchanged on a second import: nothing to count
    expect(await importKeys([later.imported, kept.imported])).toEqual({ inserted: 0, updated: 0, refused: 0, refusedPublicIds: [] })

    const disabledAt = Date.UTC(2026, 4, 2)
    expect(await importKeys([{ ...later.imported, description: "retired", disabledAt }])).toEqual({ inserted: 0, updated: 1, refused: 0, refusedPublicIds: [] })
    expect(await statusWith(later.text)).toEqual({ status: 401, message: "API key Tz7LaterOff1 is disabled" })
    const found = await Effect.runPromise(store.keys.find("Tz7LaterOff1"))
    expect(found).toMatchObject({ issuer: "tensorzero", description: "retired", disabledAt })

    // disabled here by its mixed-case id, like any key; TensorZero's row says nothing of it
    const disabledHere = await call(gateway, "POST", "/v1/ui/api_keys/Tz7KeptOff01/disable", { key: admin })
    expect(disabledHere.status, disabledHere.text).toBe(200)
    await importKeys([kept.imported])
    expect(await statusWith(kept.text)).toEqual({ status: 401, message: "API key Tz7KeptOff01 is disabled" })
  })

  it("never overwrites a key this gateway issued: the clashing public id is refused", async () => {
    const own = await createKey(database.url)
    const clash = tensorZeroKey(own.publicId, { description: "not ours" })
    const fresh = tensorZeroKey("Tz7FreshKey1")
    expect(await importKeys([clash.imported, fresh.imported])).toEqual({ inserted: 1, updated: 0, refused: 1, refusedPublicIds: [own.publicId] })
    expect((await statusWith(own.key)).status).toBe(200)
    // and this gateway's key does not work with TensorZero's prefix
    expect(await statusWith(`sk-t0-${own.publicId}-${own.secret}`)).toEqual({ status: 401, message: "unknown API key" })
    expect(await statusWith(clash.text)).toEqual({ status: 401, message: "unknown API key" })
    expect(await Effect.runPromise(store.keys.find(own.publicId))).toMatchObject({ issuer: "gateway" })
    expect((await Effect.runPromise(store.keys.find(own.publicId)))?.description).toBeUndefined()
  })
})
