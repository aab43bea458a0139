/**
 * Helpers of the API key, authentication and rate limiting suites (test/integration/auth-*.test.ts,
 * test/integration/ratelimit-*.test.ts): keys made by the real `gateway --create-api-key`,
 * requests that carry one, a Redis logical database of a suite's own, and a port nothing
 * listens on.
 */
import { execFile } from "node:child_process"
import * as net from "node:net"
import { promisify } from "node:util"
import { createClient } from "redis"
import { expect } from "vitest"
import { generateApiKey } from "../../src/auth/apiKey.ts"
import type { RunningGateway } from "./gateway.ts"
import { runGateway } from "./gateway.ts"

export const keyPattern = /^sk-gw-([a-z0-9]{12})-([A-Za-z0-9]{48})$/

export interface ApiKey {
  readonly key: string
  readonly publicId: string
  readonly secret: string
}

export const parseKey = (key: string): ApiKey => {
  const match = keyPattern.exec(key)
  if (match === null) throw new Error(`not an API key: ${JSON.stringify(key)}`)
  return { key, publicId: match[1], secret: match[2] }
}

/** a new key from `gateway --create-api-key` (extra arguments such as `--expiration` appended) on the relational database `url` */
export const createKey = async (url: string, extraArgs: ReadonlyArray<string> = []): Promise<ApiKey> => {
  const result = await runGateway(["--create-api-key", ...extraArgs], { env: { GATEWAY_RELATIONAL_DB_URL: url } })
  expect(result.code, result.stderr).toBe(0)
  return parseKey(result.stdout.trim())
}

export const createKeys = (url: string, count: number): Promise<Array<ApiKey>> =>
  Promise.all(Array.from({ length: count }, () => createKey(url)))

/**
 * `count` new keys written straight into the api_keys table of `url` (migrated already, e.g. by
 * `createKey`), as `--create-api-key` writes them: much faster than one command per key, for
 * suites about what keys are allowed rather than about making them.
 */
export const insertKeys = async (url: string, count: number): Promise<Array<ApiKey>> => {
  const keys = Array.from({ length: count }, () => generateApiKey())
  const rows = keys.map((key) => `('${key.publicId}', '\\x${Buffer.from(key.secretHash).toString("hex")}'::bytea)`)
  await psql(url, `INSERT INTO api_keys (public_id, secret_hash) VALUES ${rows.join(", ")}`)
  return keys.map((key) => parseKey(key.key))
}

/** `gateway --disable-api-key <public id>`, expecting exit 0 */
export const disableKey = async (url: string, publicId: string): Promise<void> => {
  const result = await runGateway(["--disable-api-key", publicId], { env: { GATEWAY_RELATIONAL_DB_URL: url } })
  expect(result.code, result.stderr).toBe(0)
}

export interface Answer {
  readonly status: number
  readonly body: any
  readonly text: string
  readonly headers: Headers
}

const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/**
 * one request with fetch, with `Authorization: Bearer <key>` when a key is given (a string key is
 * sent as it is), and `headers` besides (a cookie, a CSRF token)
 */
export const call = async (
  gateway: RunningGateway | string,
  method: "GET" | "POST" | "PUT" | "DELETE",
  route: string,
  options: {
    readonly key?: ApiKey | string
    readonly authorization?: string
    readonly body?: unknown
    readonly headers?: Readonly<Record<string, string>>
  } = {}
): Promise<Answer> => {
  const headers: Record<string, string> = {}
  if (options.body !== undefined) headers["content-type"] = "application/json"
  const key = typeof options.key === "string" ? options.key : options.key?.key
  if (key !== undefined) headers.authorization = `Bearer ${key}`
  if (options.authorization !== undefined) headers.authorization = options.authorization
  Object.assign(headers, options.headers)
  const base = typeof gateway === "string" ? gateway : gateway.url
  const response = await fetch(base + route, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body)
  })
  const text = await response.text()
  return { status: response.status, body: parsed(text), text, headers: response.headers }
}

/** `gateway` whose `post` and `get` carry `key`, for the helpers of test/support/observability.ts */
export const withKey = (gateway: RunningGateway, key: ApiKey): RunningGateway => ({
  ...gateway,
  post: (route, body, headers = {}) => gateway.post(route, body, { authorization: `Bearer ${key.key}`, ...headers }),
  get: async (route) => {
    const answer = await call(gateway, "GET", route, { key })
    return { status: answer.status, body: answer.body, headers: answer.headers }
  },
  stop: gateway.stop
})

export const userMessages = (text: string) => ({ messages: [{ role: "user", content: text }] })

/** the body of a direct call to the dummy model, with tags and chat_completion params when given */
export const dummyInference = (
  options: { readonly tags?: Record<string, string>; readonly maxTokens?: number; readonly text?: string; readonly stream?: boolean } = {}
) => ({
  model_name: "dummy::hello",
  input: userMessages(options.text ?? "Hi"),
  ...(options.tags === undefined ? {} : { tags: options.tags }),
  ...(options.maxTokens === undefined ? {} : { params: { chat_completion: { max_tokens: options.maxTokens } } }),
  ...(options.stream === undefined ? {} : { stream: options.stream })
})

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * Calls `attempt` every 50 ms until `done` holds for its answer, for up to `timeoutMs`; returns
 * the answer and when it came (ms since the start).
 */
export const pollUntil = async <A>(
  attempt: () => Promise<A>,
  done: (value: A) => boolean,
  timeoutMs: number
): Promise<{ value: A; elapsedMs: number }> => {
  const started = Date.now()
  for (;;) {
    const value = await attempt()
    if (done(value)) return { value, elapsedMs: Date.now() - started }
    if (Date.now() - started > timeoutMs) {
      throw new Error(`gave up after ${timeoutMs} ms: last answer ${JSON.stringify(value)}`)
    }
    await sleep(50)
  }
}

/** a TCP port on 127.0.0.1 nothing listens on (taken, then released) */
export const closedPort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })

export const redisServerUrl = process.env.GATEWAY_TEST_REDIS_URL ?? "redis://127.0.0.1:6379"

export interface RedisDatabase {
  /** the URL of the logical database, for GATEWAY_REDIS_URL */
  readonly url: string
  readonly keys: () => Promise<Array<string>>
  readonly flush: () => Promise<void>
  readonly close: () => Promise<void>
}

/**
 * Logical database `index` of the test Redis, emptied: each suite that points gateways at Redis
 * has a number of its own (the gateway has no key prefix to set), and empties it again in `close`.
 */
export const redisDatabase = async (index: number): Promise<RedisDatabase> => {
  const server = new URL(redisServerUrl)
  server.pathname = `/${index}`
  const url = server.toString()
  const client = createClient({ url })
  await client.connect()
  await client.flushDb()
  return {
    url,
    keys: () => client.keys("*"),
    flush: async () => {
      await client.flushDb()
    },
    close: async () => {
      await client.flushDb()
      client.destroy()
    }
  }
}

/** runs one statement on a test database (its URL as freshDatabase gave it) */
export const psql = async (url: string, statement: string): Promise<string> => {
  const parsedUrl = new URL(url)
  const { stdout } = await promisify(execFile)("psql", [
    "-h", parsedUrl.hostname, "-p", parsedUrl.port || "5432", "-U", decodeURIComponent(parsedUrl.username) || "postgres",
    "-d", parsedUrl.pathname.slice(1), "-v", "ON_ERROR_STOP=1", "-At", "-c", statement
  ])
  return stdout.trim()
}
