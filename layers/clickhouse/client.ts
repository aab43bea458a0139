/**
 * The ClickHouse connection every ClickHouse adapter shares, for an http(s)
 * GATEWAY_ANALYTICS_DB_URL (`http://user:password@host:8123/database`): one
 * `@clickhouse/client` for the scope, queries that are aborted when their effect is
 * interrupted, and the one mapping of its failures to `StoreError`s (with the error code and
 * whether the rows are at fault, src/analytics/writeFaults.ts).
 *
 * Several comma-separated URLs name replicas of one replicated cluster
 * (GATEWAY_CLICKHOUSE_CLUSTER_NAME, docs/deploying.md): every request goes to the
 * replica that answered last, and one that cannot be reached (a connection error, or a
 * replica that lost ZooKeeper) is retried at once on the next, so that writes and reads go on
 * while a replica is down. A batch sent again to another replica is the same block, which a
 * Replicated table stores once (insert deduplication); the ReplacingMergeTree tables merge
 * any double of an id besides.
 */
import { ClickHouseLogLevel, createClient } from "@clickhouse/client"
import { Buffer } from "node:buffer"
import { Readable } from "node:stream"
import { finished } from "node:stream/promises"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { clickHouseErrorCode, clickHouseRowsAtFault, isTooLargeForAString } from "../../src/analytics/writeFaults.ts"
import { joinTexts } from "../../src/analytics/database.ts"
import { StoreError } from "../../src/storeError.ts"

export interface Connection {
  readonly url: string
  readonly username: string
  readonly password: string
  readonly database: string
}

/** `http://user:password@host:port/database`: credentials and database are taken out of the URL. */
const parseOneUrl = (url: string): Connection => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new StoreError({ message: "clickhouse URL is not a valid URL" })
  }
  const database = decodeURIComponent(parsed.pathname.replace(/^\/|\/$/g, "")) || "default"
  // the name goes into CREATE DATABASE, where it cannot be a hex literal
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(database)) {
    throw new StoreError({ message: `clickhouse database name must be letters, digits and underscores: ${JSON.stringify(database)}` })
  }
  return {
    url: `${parsed.protocol}//${parsed.host}`,
    username: decodeURIComponent(parsed.username) || "default",
    password: decodeURIComponent(parsed.password),
    database
  }
}

/**
 * One URL, or several separated by commas (the replicas of one cluster), all naming the same
 * database.
 */
export const parseUrls = (urls: string): ReadonlyArray<Connection> => {
  const connections = urls.split(",").map((url) => url.trim()).filter((url) => url !== "").map(parseOneUrl)
  if (connections.length === 0) throw new StoreError({ message: "clickhouse URL is not a valid URL" })
  if (new Set(connections.map((connection) => connection.database)).size > 1) {
    throw new StoreError({ message: "clickhouse URLs must all name the same database (they are replicas of one cluster)" })
  }
  return connections
}

export const clientFor = (connection: Connection, database: string) =>
  createClient({
    url: connection.url,
    username: connection.username,
    password: connection.password,
    database,
    application: "llm-gateway",
    // failures reach the caller as StoreErrors, which the gateway logs once, in its own format
    log: { level: ClickHouseLogLevel.OFF }
  })

type Client = ReturnType<typeof clientFor>

// ---- errors

/** The reason, in one line: the server's message without the stack trace 18.16 appends, or the socket error. */
export const reasonOf = (error: unknown): string => {
  if (!(error instanceof Error)) return String(error)
  const code = (error as { code?: unknown }).code
  let message = error.message === "" && typeof code === "string" ? code : error.message
  const exception = message.lastIndexOf("DB::Exception: ")
  if (exception >= 0) message = message.slice(exception + "DB::Exception: ".length)
  message = message.split(/, e\.what\(\) = |\. \(version |Stack trace|\n/)[0].trim()
  return message.length > 300 ? `${message.slice(0, 300)}...` : message
}

export const storeError = (operation: string) => (error: unknown) =>
  error instanceof StoreError ? error : new StoreError({ message: `clickhouse ${operation} failed: ${reasonOf(error)}`, outage: isOutage(error) })

/**
 * ClickHouse error codes of a server that cannot answer now: timeouts and network errors
 * between its parts (159 TIMEOUT_EXCEEDED, 209 SOCKET_TIMEOUT, 210 NETWORK_ERROR, 279
 * ALL_CONNECTION_TRIES_FAILED), overload (202 TOO_MANY_SIMULTANEOUS_QUERIES, 241
 * MEMORY_LIMIT_EXCEEDED, 252 TOO_MANY_PARTS), read-only or full (164 READONLY, 242
 * TABLE_IS_READ_ONLY, 243 NOT_ENOUGH_SPACE), and refusing the gateway's user (192
 * UNKNOWN_USER, 193 WRONG_PASSWORD, 194 REQUIRED_PASSWORD, 497 ACCESS_DENIED, 516
 * AUTHENTICATION_FAILED).
 */
const outageCodes: ReadonlySet<number> = new Set([159, 164, 192, 193, 194, 202, 209, 210, 241, 242, 243, 252, 279, 497, 516])

/**
 * Whether a failed request is the server's rather than the query's: an error without a
 * ClickHouse code is the connection's (refused, reset, timed out), unless it is the gateway's
 * own (a RangeError: an answer too large for a string; a SyntaxError: an answer that is not
 * JSON); an error with one is when `codes` holds it.
 */
const serverFault = (codes: ReadonlySet<number>) => (error: unknown): boolean => {
  if (error instanceof RangeError || error instanceof SyntaxError) return false
  const code = clickHouseErrorCode(error)
  return code === undefined ? !/maximum allowed size of a string/.test(reasonOf(error)) : codes.has(code)
}

/** Whether a failed request means the server is out (a 503) rather than this query failing on a working server (a 500). */
const isOutage = serverFault(outageCodes)

/** 164 READONLY, 209 SOCKET_TIMEOUT, 210 NETWORK_ERROR, 242 TABLE_IS_READ_ONLY, 999 KEEPER_EXCEPTION */
const replicaOutCodes: ReadonlySet<number> = new Set([164, 209, 210, 242, 999])

/**
 * Whether another replica may take a request that failed on this one: the server could not be
 * reached, or it is up but cannot write or reach its peers (its session with ZooKeeper lost,
 * its table read-only).
 */
const isReplicaOut = serverFault(replicaOutCodes)

/** A failed write, with its error code and whether the rows are at fault (src/analytics/writeFaults.ts). */
export const writeError = (error: unknown): StoreError => {
  if (error instanceof StoreError) return error
  if (isTooLargeForAString(error)) {
    return new StoreError({ message: `clickhouse write failed: the batch is too large to send (${reasonOf(error)})`, rowsAtFault: true })
  }
  const code = clickHouseErrorCode(error)
  return new StoreError({
    message: storeError("write")(error).message,
    ...(code !== undefined && { code: String(code) }),
    rowsAtFault: clickHouseRowsAtFault(code)
  })
}

// ---- the client

/** a request body of bytes: a stream of one chunk, not in object mode (the client sends it as it is) */
const bodyOf = (...parts: ReadonlyArray<Buffer>): Readable => {
  const body = new Readable({ read() {} })
  for (const bytes of parts) body.push(bytes)
  body.push(null)
  return body
}

export interface ClickHouse {
  /** the first replica's (or the only server's) connection; all name the same database */
  readonly connection: Connection
  /** every URL's connection, in the order given */
  readonly connections: ReadonlyArray<Connection>
  /** runs `work`, aborted if the effect is interrupted; any failure is a StoreError */
  readonly run: <A>(operation: string, work: (signal: AbortSignal) => Promise<A>) => Effect.Effect<A, StoreError>
  /** the rows of a query, 64-bit integers as strings */
  readonly select: <Row>(query: string, signal: AbortSignal) => Promise<Array<Row>>
  /** a statement without rows (DDL, INSERT ... SELECT, a mutation) */
  readonly command: (query: string, signal: AbortSignal) => Promise<unknown>
  /** one INSERT of JSONEachRow lines (UTF-8); table names are the code's own, never input */
  readonly insert: (table: string, lines: ReadonlyArray<Buffer>, signal: AbortSignal) => Promise<unknown>
  /**
   * one INSERT of JSONEachRow text in parts (each whole lines, each line ending in a newline),
   * all given at once: the server stores all of it or none, as `insert`'s (a body that arrives
   * in bursts it may store a burst at a time), without joining the parts into one buffer first
   */
  readonly insertParts: (table: string, parts: ReadonlyArray<Buffer>, signal: AbortSignal) => Promise<unknown>
}

/** The client of the database `urls` names (one URL, or a cluster's replicas), closed with the scope. */
export const makeClickHouse = (urls: string): Effect.Effect<ClickHouse, StoreError, Scope.Scope> =>
  Effect.gen(function*() {
    const connections = yield* Effect.try({ try: () => parseUrls(urls), catch: storeError("connect") })
    const clients = yield* Effect.acquireRelease(
      Effect.try({ try: () => connections.map((connection) => clientFor(connection, connection.database)), catch: storeError("connect") }),
      (clients) => Effect.promise(() => Promise.all(clients.map((client) => client.close().catch(() => undefined))))
    )

    /** the replica that answered last: requests go there first */
    let current = 0
    /**
     * `work` on the current replica, then on each other one while the replica tried is out; the
     * last failure when none answers. A single server's failure is simply its failure.
     */
    const onSomeReplica = async <A>(work: (client: Client) => Promise<A>, signal: AbortSignal): Promise<A> => {
      const first = current
      for (let attempt = 0; ; attempt++) {
        const index = (first + attempt) % clients.length
        try {
          const result = await work(clients[index])
          current = index
          return result
        } catch (error) {
          if (attempt + 1 >= clients.length || signal.aborted || !isReplicaOut(error)) throw error
        }
      }
    }

    const insertBody = (table: string, parts: ReadonlyArray<Buffer>, signal: AbortSignal) =>
      onSomeReplica(async (client) => {
        const { stream } = await client.exec({
          query: `INSERT INTO ${table} FORMAT JSONEachRow`,
          // a fresh body for each replica tried: a stream is read once
          values: bodyOf(...parts),
          abort_signal: signal
        })
        // the answer of an INSERT is empty: read to its end, which frees the connection
        stream.resume()
        await finished(stream)
      }, signal)

    return {
      connection: connections[0],
      connections,
      run: (operation, work) => Effect.tryPromise({ try: work, catch: storeError(operation) }),
      select: <Row>(query: string, signal: AbortSignal): Promise<Array<Row>> =>
        onSomeReplica(async (client) => {
          const result = await client.query({
            query,
            format: "JSONEachRow",
            abort_signal: signal,
            // UInt64 (times, float bits) as strings, whatever the server's default: exact past 2^53
            clickhouse_settings: { output_format_json_quote_64bit_integers: 1 }
          })
          return result.json<Row>()
        }, signal),
      // the answer whole before its status: an `ON CLUSTER` statement's failure on a replica may
      // otherwise come after the replicas that succeeded, in an answer already a 200
      command: (query, signal) =>
        onSomeReplica((client) => client.command({ query, abort_signal: signal, clickhouse_settings: { wait_end_of_query: 1 } }), signal),
      // The lines go as the request's body, joined once into a buffer: in the query text they
      // would be copied into a string, flattened, and encoded to UTF-8 again.
      // (`exec`: the client's `insert` would take a stream of bytes for rows to serialize again)
      insert: (table, lines, signal) => insertBody(table, [joinTexts(lines, "\n")], signal),
      insertParts: insertBody
    }
  })
