/**
 * What the Redis connection (connection.ts) needs of a client, whether of a standalone server
 * or of a cluster (cluster.ts), and the options that make both fail fast instead of waiting.
 */
import type { createClient } from "redis"

/** the longest a connection attempt or a command may take before it fails */
export const timeoutMs = 2_000
/** the longest pause between reconnection attempts once Redis went away */
export const maxReconnectDelayMs = 1_000
/** commands waiting for Redis beyond this many fail at once (Redis is stuck, memory is not) */
const maxQueuedCommands = 10_000

/** the client options that make commands fail fast instead of waiting for Redis */
export const failFast = {
  disableOfflineQueue: true,
  commandsQueueMaxLength: maxQueuedCommands,
  socket: { connectTimeout: timeoutMs }
} as const

/** reconnect forever, backing off up to a second (with some jitter, so that clients spread) */
export const reconnectForever = (retries: number): number =>
  Math.min(50 * 2 ** retries, maxReconnectDelayMs) + Math.floor(Math.random() * 100)

export type RedisReply = Awaited<ReturnType<ReturnType<typeof createClient>["sendCommand"]>>

export interface CommandOptions {
  readonly abortSignal?: AbortSignal
  readonly timeout: number
}

/** one client (a standalone server's, or a cluster's) */
export interface Link {
  readonly connect: () => Promise<unknown>
  /** sends `args`; on a cluster, to the master of `key`'s slot */
  readonly send: (key: string, args: Array<string>, options: CommandOptions) => Promise<RedisReply>
  /** finishes what is in flight, then disconnects */
  readonly close: () => Promise<void>
  readonly destroy: () => void
}

/** Handlers a link calls as its connection comes and goes (the connection logs each change once). */
export interface LinkEvents {
  /** the connection to `node` (undefined: to the server, or the cluster as a whole) broke, and is being made again */
  readonly lost: (cause: unknown, node?: string) => void
  /** the connection to `node` (undefined: the server, or the cluster as a whole) answers */
  readonly ready: (node?: string) => void
  /** the cluster's slot map could not be read again (all the nodes asked failed) */
  readonly mapUnread: (cause: unknown) => void
}
