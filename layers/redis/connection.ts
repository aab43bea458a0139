/**
 * One connection to Redis/Valkey for the gateway's own uses (the rate limits' buckets, the
 * inference cache), at GATEWAY_REDIS_URL (`redis://`, `rediss://` for TLS; one instance, not a
 * cluster).
 *
 * Failing fast matters more than waiting: while Redis is unreachable the client reconnects in
 * the background (every second at most) and commands fail at once instead of queueing; a
 * command Redis does not answer within two seconds fails too (it may still be applied later).
 * A connection that stays silent is replaced (see `replaceIfSilent`).
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { ClientClosedError, ClientOfflineError, createClient, ErrorReply } from "redis"
import { StoreError } from "../../src/storeError.ts"

/** the longest a connection attempt or a command may take before it fails */
export const timeoutMs = 2_000
/** the longest pause between reconnection attempts once Redis went away */
const maxReconnectDelayMs = 1_000
/** a connection silent this long while asked is replaced by a new one */
const staleAfterMs = 2 * timeoutMs
/** commands waiting for Redis beyond this many fail at once (Redis is stuck, memory is not) */
const maxQueuedCommands = 10_000

/** what went wrong, in one line, without a stack */
export const describe = (cause: unknown): string => {
  if (cause instanceof ClientOfflineError) return "redis is unreachable (reconnecting)"
  if (cause instanceof ClientClosedError) return "the redis client is closed"
  if (cause instanceof AggregateError && cause.errors.length > 0) return describe(cause.errors[0])
  const text = cause instanceof Error
    ? cause.message || String((cause as { code?: unknown }).code ?? cause.name)
    : String(cause)
  return text.replace(/\s+/g, " ").trim()
}

/** `effect`, failed with a StoreError naming `what` when Redis takes longer than `timeoutMs` */
export const withTimeout = <A>(effect: Effect.Effect<A, StoreError>, what: string): Effect.Effect<A, StoreError> =>
  Effect.timeoutOrElse(effect, {
    duration: timeoutMs,
    orElse: () => Effect.fail(new StoreError({ message: `${what} failed: redis did not answer within ${timeoutMs / 1000}s` }))
  })

/** waits for `promise`, `ms` at most, leaving no timer behind */
const waitAtMost = async (promise: Promise<unknown>, ms: number): Promise<void> => {
  let timer: ReturnType<typeof setTimeout> | undefined
  await Promise.race([promise.catch(() => {}), new Promise<void>((resolve) => timer = setTimeout(resolve, ms))])
  clearTimeout(timer)
}

/** the client options that make commands fail fast instead of waiting for Redis */
const createFailFastClient = (url: string, reconnectStrategy: (retries: number, cause: Error) => number | Error) =>
  createClient({
    url,
    disableOfflineQueue: true,
    commandsQueueMaxLength: maxQueuedCommands,
    socket: { connectTimeout: timeoutMs, reconnectStrategy }
  })
type Client = ReturnType<typeof createFailFastClient>

export type RedisReply = Awaited<ReturnType<Client["sendCommand"]>>

export interface RedisConnection {
  /** sends one command on the current connection, failing after `timeoutMs` */
  readonly send: (args: Array<string>, signal?: AbortSignal) => Promise<RedisReply>
  /** a command failed: the connection is replaced when it has been silent too long */
  readonly failed: () => void
}

/**
 * A connection to the Redis at `url`, connected before it is returned (a StoreError when Redis
 * cannot be reached within two seconds); it closes with the scope.
 */
export const makeRedisConnection = (url: string): Effect.Effect<RedisConnection, StoreError, Scope.Scope> =>
  Effect.gen(function*() {
    const runLog = Effect.runSyncWith(yield* Effect.context<never>())
    let current: Client
    /** the current client is connected */
    let healthy = false
    let everConnected = false
    let closed = false
    let lastAnswerAt = 0
    let lastReplacedAt = 0

    /**
     * A client. The first fails on its first connection error (a start-up problem to report);
     * once connected, and from the start for a replacement, it reconnects forever, backing off
     * up to a second.
     */
    const open = (replacement: boolean): Client => {
      let reconnect = replacement
      const client = createFailFastClient(
        url,
        (retries, cause) => reconnect ? Math.min(50 * 2 ** retries, maxReconnectDelayMs) + Math.floor(Math.random() * 100) : cause
      )
      // node-redis throws `error` events nobody listens to: every failed reconnection emits one
      client.on("error", (cause: unknown) => {
        if (client !== current || !healthy) return
        healthy = false
        runLog(Effect.logWarning(`redis connection lost, reconnecting: ${describe(cause)}`))
      })
      client.on("ready", () => {
        reconnect = true
        if (client !== current) return
        if (!healthy && everConnected) runLog(Effect.logInfo("redis connection restored"))
        healthy = true
        everConnected = true
        lastAnswerAt = performance.now()
      })
      return client
    }

    /**
     * A connection that stays silent is replaced: the peer may be gone without a word (a host
     * that died, a dropped NAT entry), which TCP notices only after many minutes. Called when a
     * command failed; at most once per `staleAfterMs`.
     */
    const replaceIfSilent = () => {
      const now = performance.now()
      if (closed || now - lastAnswerAt < staleAfterMs || now - lastReplacedAt < staleAfterMs) return
      lastReplacedAt = now
      if (healthy) runLog(Effect.logWarning(`redis has not answered for ${staleAfterMs / 1000}s, opening a new connection`))
      healthy = false
      const silent = current
      current = open(true)
      current.connect().catch(() => {})
      silent.destroy()
    }

    yield* Effect.acquireRelease(
      Effect.try({
        try: () => {
          current = open(false)
        },
        catch: (cause) => new StoreError({ message: `redis connection failed: ${describe(cause)}` })
      }),
      () =>
        Effect.promise(async () => {
          closed = true
          // finish what is in flight, but do not let a stuck or absent Redis hold up shutdown
          if (healthy) await waitAtMost(current.close(), timeoutMs)
          current.destroy()
        })
    )

    yield* withTimeout(
      Effect.tryPromise({
        try: () => current.connect(),
        catch: (cause) => new StoreError({ message: `redis connection failed: ${describe(cause)}` })
      }),
      "redis connection"
    )

    const send = (args: Array<string>, signal?: AbortSignal) =>
      current.sendCommand(args, { ...(signal === undefined ? {} : { abortSignal: signal }), timeout: timeoutMs }).then(
        (reply) => {
          lastAnswerAt = performance.now()
          return reply
        },
        (error: unknown) => {
          if (error instanceof ErrorReply) lastAnswerAt = performance.now()
          throw error
        }
      )

    return { send, failed: replaceIfSilent }
  })
