/**
 * One connection to Redis/Valkey for the gateway's own uses (the rate limits' buckets, the
 * inference cache), at GATEWAY_REDIS_URL (`redis://`, `rediss://` for TLS): a standalone server,
 * or any one node of a Redis Cluster. At connection the node is asked (`INFO cluster`); a
 * cluster node (`cluster_enabled:1`) makes this a cluster client (layers/redis/cluster.ts) that
 * finds the other nodes from it, sends each command to the master of its key's slot and follows
 * the cluster through redirections and failovers. A standalone server keeps its one client.
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
import { throttledWarning } from "../../src/throttledWarning.ts"
import { clusterEnabled, type ClusterNode, openCluster } from "./cluster.ts"
import { failFast, type Link, type LinkEvents, reconnectForever, type RedisReply, timeoutMs } from "./link.ts"

export { type RedisReply, timeoutMs } from "./link.ts"

/** a connection silent this long while asked is replaced by a new one */
const staleAfterMs = 2 * timeoutMs

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

/** the client of one standalone server, failing fast */
const createFailFastClient = (url: string, reconnectStrategy: (retries: number, cause: Error) => number | Error) =>
  createClient({ url, ...failFast, socket: { ...failFast.socket, reconnectStrategy } })
type Client = ReturnType<typeof createFailFastClient>

/** a standalone server's client as a Link: commands go to it whatever their key */
const standaloneLink = (client: Client): Link => ({
  connect: () => client.connect(),
  send: (_key, args, options) => client.sendCommand(args, options),
  close: () => client.close(),
  destroy: () => client.destroy()
})

export interface RedisConnection {
  /**
   * sends one command on the current connection, failing after `timeoutMs`; `key` is the key
   * the command works on (on a cluster, the command goes to the master of its slot)
   */
  readonly send: (key: string, args: Array<string>, signal?: AbortSignal) => Promise<RedisReply>
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
    let current!: Link
    /** the current cluster client's masters; undefined: a standalone server */
    let clusterNodes: (() => ReadonlyArray<ClusterNode>) | undefined
    /** the masters last known, where a replacement starts from (a replacement may not have found any) */
    let knownNodes: ReadonlyArray<ClusterNode> = []
    /** the connection is healthy, and (on a cluster) which nodes are not */
    let healthy = false
    const lostNodes = new Set<string>()
    let everConnected = false
    let closed = false
    let lastAnswerAt = 0
    let lastReplacedAt = 0
    const unreadMap = throttledWarning(10_000)

    const events = (isCurrent: () => boolean): LinkEvents => ({
      lost: (cause, node) => {
        if (!isCurrent()) return
        if (node === undefined) {
          if (!healthy) return
          healthy = false
          runLog(Effect.logWarning(`redis connection lost, reconnecting: ${describe(cause)}`))
        } else if (!lostNodes.has(node)) {
          lostNodes.add(node)
          runLog(Effect.logWarning(`redis cluster node ${node} unreachable, reconnecting: ${describe(cause)}`))
        }
      },
      ready: (node) => {
        if (!isCurrent()) return
        if (node !== undefined) {
          if (lostNodes.delete(node)) runLog(Effect.logInfo(`redis cluster node ${node} answers again`))
          return
        }
        if (!healthy && everConnected) runLog(Effect.logInfo("redis connection restored"))
        healthy = true
        everConnected = true
        lastAnswerAt = performance.now()
      },
      mapUnread: (cause) => {
        if (!isCurrent()) return
        unreadMap.warn((heldBack) =>
          `redis cluster: could not read the slot map: ${describe(cause)}${heldBack === 0 ? "" : ` (and ${heldBack} more times since the last warning)`}`
        ).pipe(runLog)
      }
    })

    /**
     * A standalone server's client. The first fails on its first connection error (a start-up
     * problem to report); once connected, and from the start for a replacement, it reconnects
     * forever, backing off up to a second.
     */
    const openStandalone = (replacement: boolean): Link => {
      let reconnect = replacement
      const client = createFailFastClient(
        url,
        (retries, cause) => reconnect ? reconnectForever(retries) : cause
      )
      const link = standaloneLink(client)
      const on = events(() => link === current)
      // node-redis throws `error` events nobody listens to: every failed reconnection emits one
      client.on("error", (cause: unknown) => on.lost(cause))
      client.on("ready", () => {
        reconnect = true
        on.ready()
      })
      return link
    }

    const openClusterLink = (rootNodes: ReadonlyArray<ClusterNode>) => {
      let link: Link | undefined
      const opened = openCluster(url, rootNodes, events(() => link !== undefined && link === current))
      link = opened.link
      clusterNodes = opened.nodes
      return link
    }

    /**
     * A connection that stays silent is replaced: the peer may be gone without a word (a host
     * that died, a dropped NAT entry), which TCP notices only after many minutes. Called when a
     * command failed; at most once per `staleAfterMs`. A cluster's replacement starts from
     * every node it knew, so that the node GATEWAY_REDIS_URL names may be the one gone.
     */
    const replaceIfSilent = () => {
      const now = performance.now()
      if (closed || now - lastAnswerAt < staleAfterMs || now - lastReplacedAt < staleAfterMs) return
      lastReplacedAt = now
      if (healthy) runLog(Effect.logWarning(`redis has not answered for ${staleAfterMs / 1000}s, opening a new connection`))
      healthy = false
      const silent = current
      if (clusterNodes === undefined) {
        current = openStandalone(true)
      } else {
        const seen = clusterNodes()
        if (seen.length > 0) knownNodes = seen
        current = openClusterLink(knownNodes)
      }
      lostNodes.clear()
      current.connect().catch(() => {})
      silent.destroy()
    }

    yield* Effect.acquireRelease(
      Effect.try({
        try: () => {
          current = openStandalone(false)
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

    const connect = (what: string) =>
      withTimeout(
        Effect.tryPromise({
          try: () => current.connect(),
          catch: (cause) => new StoreError({ message: `${what} failed: ${describe(cause)}` })
        }),
        what
      )

    yield* connect("redis connection")
    const cluster = yield* withTimeout(
      Effect.tryPromise({
        try: (signal) => clusterEnabled((args) => current.send("", args, { abortSignal: signal, timeout: timeoutMs })),
        catch: (cause) => new StoreError({ message: `redis connection failed: ${describe(cause)}` })
      }),
      "redis connection"
    )
    if (cluster) {
      // the node named is the root the cluster client discovers the others from
      const probe = current
      yield* Effect.try({
        try: () => {
          current = openClusterLink([])
        },
        catch: (cause) => new StoreError({ message: `redis cluster connection failed: ${describe(cause)}` })
      })
      probe.destroy()
      yield* connect("redis cluster connection")
      const masters = clusterNodes?.().length ?? 0
      yield* Effect.logInfo(`redis: a cluster (${masters} masters), found from ${new URL(url).host}`)
    }

    const send = (key: string, args: Array<string>, signal?: AbortSignal) =>
      current.send(key, args, { ...(signal === undefined ? {} : { abortSignal: signal }), timeout: timeoutMs }).then(
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
