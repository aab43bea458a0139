/**
 * The key cache while the key store is out (a Postgres restart or failover): a key verified in
 * the last `outageGraceMs` keeps working, the store asked again once per cache lifetime; a key
 * never verified, a failure that is no outage, and a key verified too long ago fail as before.
 */
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { cachedKeyLookup, outageGraceMs } from "../../src/auth/keyCache.ts"
import type { ApiKeyStore, StoredApiKey } from "../../src/auth/store.ts"
import { StoreError } from "../../src/storeError.ts"

const key: StoredApiKey = { publicId: "abcdefabcdef", secretHash: new Uint8Array([1, 2, 3]), createdAt: 0, admin: false, workspace: "default", global: false, issuer: "gateway" }

/** a store holding `key` that fails with `failure` while one is set, counting the asks */
const storeWith = () => {
  const state = { failure: undefined as StoreError | undefined, asks: 0 }
  const store: ApiKeyStore = {
    create: () => Effect.void,
    disable: () => Effect.succeed(false),
    list: () => Effect.succeed([]),
    workspaces: () => Effect.succeed(["default"]),
    importKeys: () => Effect.die("not imported here"),
    find: (publicId) =>
      Effect.suspend(() => {
        state.asks++
        return state.failure !== undefined ? Effect.fail(state.failure) : Effect.succeed(publicId === key.publicId ? key : undefined)
      })
  }
  return { store, state }
}

const outage = new StoreError({ message: "postgres find api key failed: connect ECONNREFUSED", outage: true })

describe("the key cache during an outage of the key store", () => {
  it("answers a key verified before from the cache, asking the store once per cache lifetime", async () => {
    const { store, state } = storeWith()
    let now = 1_000_000
    const lookup = cachedKeyLookup(store, 1_000, () => now)
    const find = (publicId: string) => Effect.runPromiseExit(lookup.find(publicId))
    expect(await find(key.publicId)).toMatchObject({ _tag: "Success", value: key })
    state.failure = outage
    now += 5_000
    expect(await find(key.publicId)).toMatchObject({ _tag: "Success", value: key })
    expect(state.asks).toBe(2)
    // trusted again for a cache lifetime: the store is not asked meanwhile
    expect(lookup.cached(key.publicId)?.key).toEqual(key)
    now += 1_001
    expect(await find(key.publicId)).toMatchObject({ _tag: "Success", value: key })
    expect(state.asks).toBe(3)
    // a key never verified here is the store's failure
    expect(await find("zzzzzzzzzzzz")).toMatchObject({ _tag: "Failure" })
    // past the grace, the outage fails the key too
    now += outageGraceMs
    expect(await find(key.publicId)).toMatchObject({ _tag: "Failure" })
    // the store back: the key is verified again
    state.failure = undefined
    expect(await find(key.publicId)).toMatchObject({ _tag: "Success", value: key })
  })

  it("fails on a store failure that is no outage, even for a key verified before", async () => {
    const { store, state } = storeWith()
    let now = 0
    const lookup = cachedKeyLookup(store, 1_000, () => now)
    await Effect.runPromise(lookup.find(key.publicId))
    state.failure = new StoreError({ message: "postgres find api key failed: a stored row is larger than the driver reads", outage: false })
    now += 2_000
    expect(await Effect.runPromiseExit(lookup.find(key.publicId))).toMatchObject({ _tag: "Failure" })
  })
})
