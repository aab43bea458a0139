/**
 * The Redis rate limit buckets (layers/redis/rateLimitBuckets.ts) against the machine's real Redis
 * (GATEWAY_TEST_REDIS_URL, or 127.0.0.1:6379): token bucket semantics, all-or-nothing across
 * buckets, atomicity between parallel calls and between two clients (two gateway processes),
 * and failing fast, then recovering, when Redis is unreachable or stops answering.
 *
 * Every bucket key of this run starts with a run id, and the keys are deleted at the end.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as net from "node:net"
import { createClient } from "redis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { keyPrefix, makeRedisRateLimitBuckets, neverS } from "../../layers/redis/rateLimitBuckets.ts"
import type { ConsumeResult, RateLimitBuckets } from "../../src/ratelimit/store.ts"
import type { BucketRequest } from "../../src/ratelimit/rules.ts"
import type { StoreError } from "../../src/storeError.ts"
import { startTcpProxy } from "../support/tcpProxy.ts"

const redisUrl = process.env.GATEWAY_TEST_REDIS_URL ?? "redis://127.0.0.1:6379"
const redisServer = { host: new URL(redisUrl).hostname, port: Number(new URL(redisUrl).port || 6379) }
const runId = `test-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`
let keyCount = 0
/** a bucket key no other test (or test run) uses */
const freshKey = (name: string) => `${runId}:${name}:${keyCount++}`

const run = <A>(effect: Effect.Effect<A, StoreError>): Promise<A> => Effect.runPromise(effect)
const failure = (effect: Effect.Effect<unknown, StoreError>): Promise<StoreError> => Effect.runPromise(Effect.flip(effect))
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

interface OpenStore {
  readonly store: RateLimitBuckets
  readonly close: () => Promise<void>
}

const openStore = async (url: string = redisUrl): Promise<OpenStore> => {
  const scope = Effect.runSync(Scope.make())
  const store = await Effect.runPromise(Scope.provide(scope)(makeRedisRateLimitBuckets(url)))
  return { store, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

/** the StoreError opening a store fails with, and how long that took */
const openFailure = async (url: string) => {
  const started = Date.now()
  const error = await Effect.runPromise(Effect.flip(Effect.scoped(makeRedisRateLimitBuckets(url))))
  return { error, elapsedMs: Date.now() - started }
}

/** a plain client, to look at and clean up what the store wrote */
const inspector = createClient({ url: redisUrl })
const bucketState = async (key: string) => ({
  fields: await inspector.hGetAll(keyPrefix + key),
  ttlMs: await inspector.pTTL(keyPrefix + key)
})

let main: OpenStore
beforeAll(async () => {
  await inspector.connect()
  main = await openStore()
})
afterAll(async () => {
  await main?.close()
  const keys: Array<string> = []
  for await (const batch of inspector.scanIterator({ MATCH: `${keyPrefix}${runId}:*`, COUNT: 1000 })) keys.push(...batch)
  if (keys.length > 0) await inspector.del(keys)
  inspector.destroy()
})

const bucket = (key: string, capacity: number, refillPerSecond: number, amount: number): BucketRequest => ({
  key,
  capacity,
  refillPerSecond,
  amount
})

const refused = (result: ConsumeResult) => {
  if (result.ok) throw new Error("expected the request to be refused")
  return result
}

describe("Redis bucket store: token buckets", () => {
  it("starts a new bucket full and takes exactly its capacity", async () => {
    const { store } = main
    const key = freshKey("full")
    expect(store.backend).toBe("redis")
    expect(await run(store.consume([bucket(key, 5, 0, 3)]))).toEqual({ ok: true })
    expect(await run(store.consume([bucket(key, 5, 0, 2)]))).toEqual({ ok: true })
    // without refill it can never be enough again
    expect(await run(store.consume([bucket(key, 5, 0, 1)]))).toEqual({ ok: false, index: 0, available: 0, retryAfterS: neverS })
    // an amount larger than a fresh bucket holds is refused, nothing taken
    const big = freshKey("big")
    expect(refused(await run(store.consume([bucket(big, 5, 1, 6)])))).toMatchObject({ index: 0, available: 5, retryAfterS: 1 })
    expect(await run(store.consume([bucket(big, 5, 1, 5)]))).toEqual({ ok: true })
  })

  it("refills continuously at the rate, never above capacity", async () => {
    const { store } = main
    const key = freshKey("refill")
    // capacity 2, refilled at 10 per second: one token every 100 ms
    const limit = (amount: number) => bucket(key, 2, 10, amount)
    expect(await run(store.consume([limit(2)]))).toEqual({ ok: true })
    const empty = refused(await run(store.consume([limit(1)])))
    expect(empty.available).toBeGreaterThanOrEqual(0)
    expect(empty.available).toBeLessThan(1)
    expect(empty.retryAfterS).toBe(1)
    await sleep(250)
    expect(await run(store.consume([limit(2)]))).toEqual({ ok: true })
    // 500 ms would be 5 tokens: the bucket holds 2 at most
    await sleep(500)
    expect(refused(await run(store.consume([limit(3)])))).toMatchObject({ index: 0, available: 2 })
    expect(await run(store.consume([limit(2)]))).toEqual({ ok: true })
  })

  it("says how much is available and how many seconds until enough", async () => {
    const { store } = main
    const key = freshKey("retry")
    expect(await run(store.consume([bucket(key, 10, 2, 10)]))).toEqual({ ok: true })
    const result = refused(await run(store.consume([bucket(key, 10, 2, 7)])))
    expect(result.index).toBe(0)
    expect(result.available).toBeGreaterThanOrEqual(0)
    expect(result.available).toBeLessThan(0.5)
    // (7 - available) / 2 per second, rounded up
    expect(result.retryAfterS).toBe(4)
  })

  it("takes from every bucket or from none, naming the first one short", async () => {
    const { store } = main
    const [a, b, c] = [freshKey("a"), freshKey("b"), freshKey("c")]
    const request = (amount: number) => [bucket(a, 5, 0, amount), bucket(b, 1, 0, amount), bucket(c, 5, 0, amount)]
    expect(await run(store.consume(request(1)))).toEqual({ ok: true })
    // b is empty: neither a nor c is charged
    for (let attempt = 0; attempt < 3; attempt++) {
      expect(await run(store.consume(request(1)))).toEqual({ ok: false, index: 1, available: 0, retryAfterS: neverS })
    }
    // a and c still hold 4 each
    expect(await run(store.consume([bucket(a, 5, 0, 4), bucket(c, 5, 0, 4)]))).toEqual({ ok: true })
    // the first bucket short is named, even when later ones are short too
    expect(refused(await run(store.consume([bucket(c, 5, 0, 0), bucket(a, 5, 0, 1), bucket(b, 1, 0, 1)])))).toMatchObject({ index: 1, available: 0 })
    expect(await run(store.consume([bucket(a, 5, 0, 0), bucket(b, 1, 0, 0)]))).toEqual({ ok: true })
  })

  it("counts a key named twice in one request as one bucket", async () => {
    const { store } = main
    const key = freshKey("twice")
    expect(refused(await run(store.consume([bucket(key, 3, 0, 2), bucket(key, 3, 0, 2)])))).toMatchObject({ index: 1, available: 1 })
    expect(await run(store.consume([bucket(key, 3, 0, 2), bucket(key, 3, 0, 1)]))).toEqual({ ok: true })
    expect(refused(await run(store.consume([bucket(key, 3, 0, 1)])))).toMatchObject({ available: 0 })
  })

  it("gives back with a negative adjustment, never above capacity", async () => {
    const { store } = main
    const key = freshKey("refund")
    expect(await run(store.consume([bucket(key, 5, 0, 3)]))).toEqual({ ok: true })
    await run(store.adjust([bucket(key, 5, 0, -1)]))
    expect(refused(await run(store.consume([bucket(key, 5, 0, 4)])))).toMatchObject({ available: 3 })
    await run(store.adjust([bucket(key, 5, 0, -100)]))
    expect(refused(await run(store.consume([bucket(key, 5, 0, 6)])))).toMatchObject({ available: 5 })
    expect(await run(store.consume([bucket(key, 5, 0, 5)]))).toEqual({ ok: true })
    // a refund to a bucket never used leaves it full, not fuller
    const unused = freshKey("unused")
    await run(store.adjust([bucket(unused, 2, 0, -10)]))
    expect(refused(await run(store.consume([bucket(unused, 2, 0, 3)])))).toMatchObject({ available: 2 })
  })

  it("lets a positive adjustment go below zero, and the debt delays the next consume", async () => {
    const { store } = main
    const key = freshKey("debt")
    // capacity 2, refilled at 10 per second
    const limit = (amount: number) => bucket(key, 2, 10, amount)
    expect(await run(store.consume([limit(2)]))).toEqual({ ok: true })
    // the call used 4 more than it borrowed
    await run(store.adjust([limit(4)]))
    const indebted = refused(await run(store.consume([limit(1)])))
    expect(indebted.available).toBeGreaterThanOrEqual(-4)
    expect(indebted.available).toBeLessThan(-3)
    expect(indebted.retryAfterS).toBe(1) // (1 + 4) / 10 per second, rounded up
    // 200 ms refills an empty bucket of 2; this one is still in debt
    await sleep(200)
    expect(refused(await run(store.consume([limit(1)]))).available).toBeLessThan(0)
    await sleep(500)
    expect(await run(store.consume([limit(2)]))).toEqual({ ok: true })
    // several buckets are adjusted together, each within its own capacity
    const other = freshKey("debt-other")
    await run(store.adjust([bucket(other, 3, 0, 5), limit(-10)]))
    expect(refused(await run(store.consume([bucket(other, 3, 0, 1)])))).toMatchObject({ available: -2 })
    expect(refused(await run(store.consume([limit(3)])))).toMatchObject({ available: 2 })
  })

  it("keeps a bucket only as long as it takes to refill, and forever when it never refills", async () => {
    const { store } = main
    const refilling = freshKey("ttl")
    expect(await run(store.consume([bucket(refilling, 4, 2, 3)]))).toEqual({ ok: true })
    const state = await bucketState(refilling)
    expect(Number(state.fields.tokens)).toBe(1)
    expect(Number(state.fields.updated)).toBeGreaterThan(1_600_000_000_000_000) // microseconds
    // 3 tokens at 2 per second: 1.5 s, plus a second of margin
    expect(state.ttlMs).toBeGreaterThan(2_000)
    expect(state.ttlMs).toBeLessThanOrEqual(2_500)

    const permanent = freshKey("no-refill")
    expect(await run(store.consume([bucket(permanent, 4, 0, 1)]))).toEqual({ ok: true })
    expect((await bucketState(permanent)).ttlMs).toBe(-1)

    // a full bucket that expired behaves as it did: full
    const short = freshKey("expiring")
    expect(await run(store.consume([bucket(short, 1, 1000, 1)]))).toEqual({ ok: true })
    expect((await bucketState(short)).ttlMs).toBeLessThanOrEqual(1_001)
    await sleep(1_100)
    expect((await bucketState(short)).ttlMs).toBe(-2)
    expect(await run(store.consume([bucket(short, 1, 1000, 1)]))).toEqual({ ok: true })
  })

  it("answers an empty request without a bucket", async () => {
    expect(await run(main.store.consume([]))).toEqual({ ok: true })
    await run(main.store.adjust([]))
  })

  it("refuses invalid buckets before charging anything", async () => {
    const { store } = main
    const key = freshKey("valid")
    const good = bucket(key, 2, 0, 1)
    const invalid: ReadonlyArray<[BucketRequest, RegExp]> = [
      [bucket(freshKey("x"), 0, 1, 1), /capacity must be a finite number above 0/],
      [bucket(freshKey("x"), -1, 1, 1), /capacity/],
      [bucket(freshKey("x"), Infinity, 1, 1), /capacity/],
      [bucket(freshKey("x"), 1, -1, 1), /refillPerSecond/],
      [bucket(freshKey("x"), 1, NaN, 1), /refillPerSecond/],
      [bucket(freshKey("x"), 1, 1, NaN), /amount must be a finite number/],
      [bucket(freshKey("x"), 1, 1, -Infinity), /amount must be a finite number/],
      [bucket(freshKey("x"), 1, 1, -1), /amount to consume must not be negative/]
    ]
    for (const [request, message] of invalid) {
      const error = await failure(store.consume([good, request]))
      expect(error._tag).toBe("StoreError")
      expect(error.message).toMatch(message)
      expect(error.message).not.toContain("\n")
    }
    for (const [request, message] of invalid.slice(0, -1)) {
      expect((await failure(store.adjust([good, request]))).message).toMatch(message)
    }
    // nothing reached Redis: the good bucket is untouched
    expect(await bucketState(key)).toEqual({ fields: {}, ttlMs: -2 })
    expect(await run(store.consume([bucket(key, 2, 0, 2)]))).toEqual({ ok: true })
  })

  it("loads its script again when Redis forgot it", async () => {
    const key = freshKey("flush")
    expect(await run(main.store.consume([bucket(key, 2, 0, 1)]))).toEqual({ ok: true })
    await inspector.scriptFlush()
    expect(await run(main.store.consume([bucket(key, 2, 0, 1)]))).toEqual({ ok: true })
    expect(refused(await run(main.store.consume([bucket(key, 2, 0, 1)])))).toMatchObject({ available: 0 })
  })
})

describe("Redis bucket store: atomicity", () => {
  const attempts = (store: RateLimitBuckets, requests: ReadonlyArray<BucketRequest>, count: number) =>
    Array.from({ length: count }, () => run(store.consume(requests)))
  const passed = (results: ReadonlyArray<ConsumeResult>) => results.filter((result) => result.ok).length

  it("lets exactly the capacity through 40 parallel consumes", async () => {
    const key = freshKey("parallel")
    const results = await Promise.all(attempts(main.store, [bucket(key, 10, 0.001, 1)], 40))
    expect(passed(results)).toBe(10)
    expect(results.filter((result) => !result.ok).every((result) => !result.ok && result.index === 0 && result.available < 1)).toBe(true)
  })

  it("lets exactly the capacity through two clients sharing the buckets (two gateway processes)", async () => {
    const second = await openStore()
    try {
      const key = freshKey("shared")
      const other = freshKey("shared-other")
      // each request also takes from a larger bucket: it is charged only for those let through
      const requests = [bucket(other, 15, 0.001, 1), bucket(key, 10, 0.001, 1)]
      const results = await Promise.all(Array.from({ length: 40 }, (_, index) => run((index % 2 ? main : second).store.consume(requests))))
      expect(passed(results)).toBe(10)
      expect(results.filter((result) => !result.ok).every((result) => !result.ok && result.index === 1)).toBe(true)
      const left = refused(await run(second.store.consume([bucket(other, 15, 0.001, 6)]))).available
      expect(left).toBeGreaterThanOrEqual(5)
      expect(left).toBeLessThan(5.1)
    } finally {
      await second.close()
    }
  })

  it("loses no adjustment made in parallel with consumes", async () => {
    const second = await openStore()
    try {
      const key = freshKey("adjusts")
      const limit = (amount: number) => bucket(key, 100, 0, amount)
      expect(await run(main.store.consume([limit(50)]))).toEqual({ ok: true })
      // between 20 and 80 whatever the order: every consume passes and no refund is capped
      const results = await Promise.all([
        ...Array.from({ length: 30 }, (_, index) => run((index % 2 ? main : second).store.consume([limit(1)]))),
        ...Array.from({ length: 30 }, (_, index) => run((index % 2 ? main : second).store.adjust([limit(-1)])))
      ])
      expect(passed(results.slice(0, 30) as ReadonlyArray<ConsumeResult>)).toBe(30)
      expect(Number((await bucketState(key)).fields.tokens)).toBe(50)
    } finally {
      await second.close()
    }
  })
})

/**
 * A TCP proxy that stops forwarding without closing anything: `freeze()` holds every byte until
 * `thaw()` (Redis alive but not answering for a while); `silenceExisting()` drops every byte of
 * the connections open at that moment, forever, while new connections work (a peer gone
 * without a word, as after a host died or a NAT entry was dropped).
 */
const startStallingProxy = async (target: { readonly host: string; readonly port: number }) => {
  let frozen = false
  const held: Array<() => void> = []
  const connections = new Set<{ silent: boolean; readonly sockets: ReadonlyArray<net.Socket> }>()
  const server = net.createServer((client) => {
    const upstream = net.connect(target)
    const connection = { silent: false, sockets: [client, upstream] }
    connections.add(connection)
    const forward = (from: net.Socket, to: net.Socket) =>
      from.on("data", (chunk: Buffer) => {
        if (connection.silent) return
        if (frozen) held.push(() => to.write(chunk))
        else to.write(chunk)
      })
    for (const socket of connection.sockets) {
      socket.on("error", () => {})
      socket.once("close", () => {
        connections.delete(connection)
        client.destroy()
        upstream.destroy()
      })
    }
    forward(client, upstream)
    forward(upstream, client)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `redis://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    freeze: () => {
      frozen = true
    },
    thaw: () => {
      frozen = false
      for (const write of held.splice(0)) write()
    },
    silenceExisting: () => {
      for (const connection of connections) connection.silent = true
    },
    connectionCount: () => connections.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const connection of connections) for (const socket of connection.sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}

describe("Redis bucket store: when Redis is unreachable", () => {
  it("fails to open within a few seconds when nothing listens", async () => {
    const closed = net.createServer()
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve))
    const port = (closed.address() as net.AddressInfo).port
    await new Promise<void>((resolve) => closed.close(() => resolve()))

    const { error, elapsedMs } = await openFailure(`redis://127.0.0.1:${port}`)
    expect(error._tag).toBe("StoreError")
    expect(error.message).toMatch(/^redis connection failed: .*ECONNREFUSED/)
    expect(elapsedMs).toBeLessThan(3_000)
  })

  it("fails to open within a few seconds when the server accepts but never answers", async () => {
    const accepted = new Set<net.Socket>()
    const silent = net.createServer((socket) => {
      accepted.add(socket)
      socket.on("error", () => {})
    })
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve))
    try {
      const { error, elapsedMs } = await openFailure(`redis://127.0.0.1:${(silent.address() as net.AddressInfo).port}`)
      expect(error.message).toBe("redis connection failed: redis did not answer within 2s")
      expect(elapsedMs).toBeLessThan(3_500)
      expect(accepted.size).toBeGreaterThan(0)
    } finally {
      for (const socket of accepted) socket.destroy()
      await new Promise<void>((resolve) => silent.close(() => resolve()))
    }
  })

  it("refuses a URL that is not a Redis URL with a StoreError", async () => {
    const { error } = await openFailure("http://127.0.0.1:6379")
    expect(error._tag).toBe("StoreError")
    expect(error.message).toMatch(/^redis connection failed: /)
    expect(error.message).not.toContain("\n")
  })

  it("fails fast while Redis is cut off, and recovers when it is back", async () => {
    const proxy = await startTcpProxy(redisServer)
    const { store, close } = await openStore(proxy.urlFor(redisUrl))
    try {
      const key = freshKey("cut")
      const limit = bucket(key, 3, 0, 1)
      expect(await run(store.consume([limit]))).toEqual({ ok: true })

      proxy.cut()
      for (let attempt = 0; attempt < 5; attempt++) {
        const started = Date.now()
        const [consumeError, adjustError] = await Promise.all([failure(store.consume([limit])), failure(store.adjust([limit]))])
        expect(Date.now() - started).toBeLessThan(2_500)
        for (const error of [consumeError, adjustError]) {
          expect(error._tag).toBe("StoreError")
          expect(error.message).toMatch(/^redis rate limit (consume|adjust) failed: /)
          expect(error.message).not.toContain("\n")
        }
        await sleep(300)
      }

      proxy.restore()
      const deadline = Date.now() + 5_000
      let result: ConsumeResult | undefined
      while (result === undefined && Date.now() < deadline) {
        result = await Effect.runPromise(Effect.orElseSucceed(store.consume([limit]), () => undefined))
        if (result === undefined) await sleep(100)
      }
      // the bucket kept its state: one taken before, one now
      expect(result).toEqual({ ok: true })
      expect(refused(await run(store.consume([bucket(key, 3, 0, 2)])))).toMatchObject({ available: 1 })
    } finally {
      const started = Date.now()
      await close()
      expect(Date.now() - started).toBeLessThan(3_000)
      await proxy.close()
    }
  })

  it("fails within a few seconds when Redis stops answering, and recovers when it answers again", async () => {
    const proxy = await startStallingProxy(redisServer)
    const { store, close } = await openStore(proxy.url)
    try {
      const key = freshKey("frozen")
      const limit = bucket(key, 5, 0, 1)
      expect(await run(store.consume([limit]))).toEqual({ ok: true })

      proxy.freeze()
      const started = Date.now()
      const error = await failure(store.consume([limit]))
      expect(Date.now() - started).toBeLessThan(3_000)
      expect(error.message).toBe("redis rate limit consume failed: redis did not answer within 2s")

      proxy.thaw()
      expect(await run(store.consume([limit]))).toEqual({ ok: true })
      // the command that timed out may have been applied once Redis answered: at most one more taken
      const left = refused(await run(store.consume([bucket(key, 5, 0, 5)]))).available
      expect([2, 3]).toContain(left)
    } finally {
      proxy.thaw()
      await close()
      await proxy.close()
    }
  })

  it("replaces a connection that went silent for good", async () => {
    const proxy = await startStallingProxy(redisServer)
    const { store, close } = await openStore(proxy.url)
    try {
      const key = freshKey("silent")
      const limit = bucket(key, 5, 0, 1)
      expect(await run(store.consume([limit]))).toEqual({ ok: true })
      expect(proxy.connectionCount()).toBe(1)

      proxy.silenceExisting()
      const started = Date.now()
      let result: ConsumeResult | undefined
      while (result === undefined && Date.now() - started < 15_000) {
        const attempt = Date.now()
        result = await Effect.runPromise(Effect.orElseSucceed(store.consume([limit]), () => undefined))
        expect(Date.now() - attempt).toBeLessThan(2_500)
        if (result === undefined) await sleep(200)
      }
      expect(result).toEqual({ ok: true })
      // four seconds without an answer, then a new connection
      expect(Date.now() - started).toBeGreaterThanOrEqual(4_000)
      expect(Date.now() - started).toBeLessThan(8_000)
      expect(proxy.connectionCount()).toBe(1)
    } finally {
      await close()
      await proxy.close()
    }
  })

  it("closes promptly while Redis is cut off", async () => {
    const proxy = await startTcpProxy(redisServer)
    const { store, close } = await openStore(proxy.urlFor(redisUrl))
    expect(await run(store.consume([bucket(freshKey("closing"), 1, 0, 1)]))).toEqual({ ok: true })
    proxy.cut()
    await sleep(100)
    const started = Date.now()
    await close()
    expect(Date.now() - started).toBeLessThan(1_000)
    expect((await failure(store.consume([bucket(freshKey("closed"), 1, 0, 1)]))).message).toMatch(/closed/)
    await proxy.close()
  })
})
