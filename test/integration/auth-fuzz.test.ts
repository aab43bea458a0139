/**
 * A fuzz-style test of the Authorization header (issue 5: "never a 500"): hundreds of random and
 * hostile values, sent with node:http (fetch refuses many of them) or, for bytes node:http will
 * not send, written on a raw socket. Every answer must be the gateway's 401 in the shape of the
 * endpoint, or Node's own 400/431 for a header its parser refuses (an empty body: never the
 * gateway's 400, which would mean the request got past authentication); never a 5xx, never a
 * dropped connection, and the gateway stays up with nothing logged as a failure of its own.
 *
 * The values come from a seeded generator: GATEWAY_FUZZ_SEED replays a run; the seed is in every
 * failure message.
 */
import * as http from "node:http"
import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ApiKey, call, createKey, dummyInference } from "../support/access.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

const seed = Number(process.env.GATEWAY_FUZZ_SEED ?? Date.now() % 2 ** 31)

/** mulberry32: a small seeded PRNG */
const makeRandom = (start: number) => {
  let state = start >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
const random = makeRandom(seed)
const int = (below: number) => Math.floor(random() * below)
const pick = <A>(items: ReadonlyArray<A>): A => items[int(items.length)]
const stringOf = (alphabet: string, length: number) => Array.from({ length }, () => alphabet[int(alphabet.length)]).join("")

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
const lowerAlnum = "abcdefghijklmnopqrstuvwxyz0123456789"
/** printable ASCII */
const ascii = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join("")

/** a string of `length` random bytes, as latin1 characters */
const randomBytes = (length: number, from = 0, to = 256) =>
  Array.from({ length }, () => String.fromCharCode(from + int(to - from))).join("")

/** a random string of Unicode code points (astral, combining, RTL, BOM...), as its UTF-8 bytes in latin1 */
const randomUnicode = (length: number) => {
  const points = Array.from({ length }, () =>
    pick([
      () => 0x80 + int(0x780),
      () => 0x300 + int(0x70),
      () => 0x590 + int(0x200),
      () => 0x4e00 + int(0x5000),
      () => 0x1f300 + int(0x300),
      () => pick([0xfeff, 0x200b, 0x2028, 0x2029, 0xfffd, 0x00a0, 0x3000])
    ])())
  return Buffer.from(String.fromCodePoint(...points), "utf8").toString("latin1")
}

let database: TestDatabase
let gateway: RunningGateway
let key: ApiKey

beforeAll(async () => {
  database = await freshDatabase("postgres")
  key = await createKey(database.url)
  gateway = await startGateway({
    config: "[gateway.auth]\nenabled = true\n",
    env: { GATEWAY_RELATIONAL_DB_URL: database.url, GATEWAY_ANALYTICS_DB_URL: undefined }
  })
})
afterAll(async () => {
  await gateway?.stop()
  await database?.drop()
})

interface Outcome {
  /** 0 when the connection was reset before an answer could be read */
  readonly status: number
  readonly body: string
}

/** Node's limit on the whole head of a request (--max-http-header-size) */
const maxHeadBytes = 16_384

/**
 * Node answers a head past its limit with a 431 and closes the connection at once; the bytes of
 * the header it did not read make the close a reset, which may reach the client before the 431.
 */
const resetByNode = (error: NodeJS.ErrnoException): Outcome => {
  if (error.code === "ECONNRESET" || error.code === "EPIPE") return { status: 0, body: "" }
  throw error
}

const inferenceBody = JSON.stringify(dummyInference())

/** one request over node:http, the header value as it is (latin1) */
const viaHttp = (route: string, authorization: string): Promise<Outcome> =>
  new Promise((resolve, reject) => {
    const post = route === "/inference"
    const request = http.request(gateway.url + route, {
      method: post ? "POST" : "GET",
      agent: false,
      headers: { authorization, ...(post ? { "content-type": "application/json" } : {}) }
    }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }))
      response.on("error", reject)
    })
    request.on("error", (error) => {
      try {
        resolve(resetByNode(error))
      } catch {
        reject(error)
      }
    })
    request.end(post ? inferenceBody : undefined)
  })

/** one request written byte for byte on a socket: for header bytes node:http refuses to send */
const viaSocket = (route: string, headerLines: ReadonlyArray<string>): Promise<Outcome> =>
  new Promise((resolve, reject) => {
    const { hostname, port } = new URL(gateway.url)
    const socket = net.connect({ host: hostname, port: Number(port) })
    const chunks: Array<Buffer> = []
    socket.on("data", (chunk: Buffer) => chunks.push(chunk))
    let failure: NodeJS.ErrnoException | undefined
    socket.on("error", (error) => (failure = error))
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("latin1")
      if (failure !== undefined && text === "") {
        try {
          return resolve(resetByNode(failure))
        } catch {
          return reject(failure)
        }
      }
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text)
      if (status === null) return reject(new Error(`no HTTP answer: ${JSON.stringify(text.slice(0, 200))}`))
      resolve({ status: Number(status[1]), body: text.slice(text.indexOf("\r\n\r\n") + 4) })
    })
    const post = route === "/inference"
    const head = [
      `${post ? "POST" : "GET"} ${route} HTTP/1.1`,
      `Host: ${hostname}:${port}`,
      ...(post ? ["Content-Type: application/json", `Content-Length: ${Buffer.byteLength(inferenceBody)}`] : []),
      ...headerLines,
      "Connection: close",
      "",
      ""
    ].join("\r\n")
    socket.end(Buffer.concat([Buffer.from(head, "latin1"), Buffer.from(post ? inferenceBody : "", "utf8")]))
  })

/** whether node:http sends this header value */
const sendable = (value: string) => {
  try {
    http.validateHeaderValue("authorization", value)
    return true
  } catch {
    return false
  }
}

const send = (route: string, value: string) =>
  sendable(value) ? viaHttp(route, value) : viaSocket(route, [`Authorization: ${value}`])

/** what may answer a hostile Authorization header: the gateway's 401, or Node's own refusal */
const checkRefused = (outcome: Outcome, route: string, what: string, valueBytes: number) => {
  const context = `seed ${seed}, ${route}, ${what}: ${outcome.status} ${outcome.body.slice(0, 300)}`
  if (outcome.status === 0) {
    expect(valueBytes, `${context}: a connection reset for a header within Node's limit`).toBeGreaterThan(maxHeadBytes - 300)
    return
  }
  expect(outcome.status, context).toBeLessThan(500)
  if (outcome.status === 401) {
    const body = JSON.parse(outcome.body)
    if (route.startsWith("/openai/")) expect(body.error.type, context).toBe("authentication_error")
    else expect(typeof body.error, context).toBe("string")
    expect(outcome.body, context).not.toContain(key.secret)
    return
  }
  // Node's parser refused the header before the gateway saw the request: no gateway body
  expect([400, 431], context).toContain(outcome.status)
  expect(outcome.body, context).toBe("")
}

/** runs `tasks` with at most `width` at a time */
const inParallel = async (tasks: ReadonlyArray<() => Promise<void>>, width: number) => {
  let next = 0
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < tasks.length) await tasks[next++]()
  }))
}

const routes = ["/inference", "/openai/v1/models"]

/** the hostile values: a description and the value, as latin1 characters */
const fuzzValues = (): Array<[string, string]> => {
  const values: Array<[string, string]> = []
  const add = (what: string, value: string) => values.push([what, value])
  for (let i = 0; i < 60; i++) add("random bytes", randomBytes(int(120)))
  for (let i = 0; i < 40; i++) add("Bearer + random bytes", `Bearer ${randomBytes(1 + int(120))}`)
  // bytes node:http sends (no control characters): they reach the gateway
  for (let i = 0; i < 40; i++) add("latin1 bytes", randomBytes(1 + int(120), 0x20, 0x100).replace(/\x7f/g, "~"))
  for (let i = 0; i < 40; i++) add("Bearer + latin1 bytes", `Bearer ${randomBytes(1 + int(120), 0x20, 0x100).replace(/\x7f/g, "~")}`)
  for (let i = 0; i < 40; i++) add("Bearer + printable", `${pick(["Bearer ", "bearer ", "BEARER\t", "Bearer  "])}${stringOf(ascii, int(100))}`)
  for (let i = 0; i < 30; i++) add("unicode", randomUnicode(1 + int(40)))
  for (let i = 0; i < 30; i++) add("Bearer + unicode", `Bearer ${randomUnicode(1 + int(40))}`)
  for (let i = 0; i < 30; i++) add("Bearer sk-gw- + unicode", `Bearer sk-gw-${key.publicId}-${randomUnicode(16)}`)
  // the right prefix, wrong lengths and alphabets
  for (let i = 0; i < 60; i++) {
    const id = stringOf(pick([lowerAlnum, alnum, ascii]), pick([0, 1, 11, 12, 13, 24, int(40)]))
    const secret = stringOf(pick([alnum, ascii, "-_.~+/="]), pick([0, 1, 47, 48, 49, 96, int(200)]))
    add("sk-gw- with wrong lengths", `Bearer ${pick(["sk-gw-", "sk-gw", "SK-GW-", "sk-gw--"])}${id}${pick(["-", "", "--", "_"])}${secret}`)
  }
  // the right public id, other secrets of every length
  for (let i = 0; i < 30; i++) add("right public id, wrong secret", `Bearer sk-gw-${key.publicId}-${stringOf(alnum, pick([48, 48, 47, 49, int(300)]))}`)
  // the right key, damaged
  for (let i = 0; i < 20; i++) {
    const at = int(key.key.length)
    const damaged = key.key.slice(0, at) + pick(["", "x", " ", "\t", "-", "é", key.key[at]?.toUpperCase() === key.key[at] ? key.key[at]?.toLowerCase() : key.key[at]?.toUpperCase()]) + key.key.slice(at + 1)
    if (damaged !== key.key) add("the key, damaged", `Bearer ${damaged}`)
  }
  // Bearer with spaces and tabs, and nothing
  for (const value of ["Bearer", "Bearer ", "Bearer\t", " Bearer", "Bearer \t ", "\t", " ", "Bearer\t\t", "Bearer" + " ".repeat(2000), "Bearer " + "\t ".repeat(500) + "x", "Bearer  Bearer", "Bearer,", "Bearer:", "Bearer=", "Token abc", "Basic", "Basic Og==", "Digest username=\"a\""]) {
    add("Bearer with blanks", value)
  }
  // control characters node:http will not send: written on the socket
  for (let i = 0; i < 30; i++) {
    add("control characters", `Bearer ${stringOf(alnum, int(10))}${randomBytes(1 + int(3), 0, 32).replace(/[\r\n\t]/g, "\x01")}${stringOf(alnum, int(10))}`)
  }
  for (const value of ["Bearer \x00", "\x00", `Bearer ${key.key}\x00`, `Bearer ${key.key}\x7f`, `Bearer\x0b${key.key}`, `Bearer\x0c${key.key}`, "Bearer \x1b[31mred"]) {
    add("a control character", value)
  }
  // very long values, around Node's 16 KiB limit on the whole head and far past it
  for (const length of [1_000, 8_000, 15_000, 16_000, 16_300, 16_384, 17_000, 64_000, 300_000]) {
    add(`${length} characters`, `Bearer ${stringOf(alnum, length)}`)
    add(`${length} random bytes`, randomBytes(length, 0x20, 0x100).replace(/\x7f/g, "x"))
  }
  add("a long key-like value", `Bearer sk-gw-${key.publicId}-${"a".repeat(15_000)}`)
  return values
}

describe("the Authorization header, fuzzed", () => {
  it(`never gets a 5xx nor gets past authentication (seed ${seed})`, async () => {
    const values = fuzzValues()
    expect(values.length).toBeGreaterThan(400)
    const tasks = values.flatMap(([what, value]) =>
      routes.map((route) => async () => {
        const described = `${what} ${JSON.stringify(value.slice(0, 120))}`
        const outcome = await send(route, value).catch((error: Error) => {
          throw new Error(`seed ${seed}, ${route}, ${described}: ${error.message}`)
        })
        checkRefused(outcome, route, described, value.length)
      })
    )
    await inParallel(tasks, 16)
  }, 90_000)

  it("header lines no client library writes: line breaks inside, duplicates, folding, empty names", async () => {
    const cases: Array<[string, ReadonlyArray<string>]> = [
      ["a lone CR", [`Authorization: Bearer ${key.key}\rX-Other: 1`]],
      ["a lone LF", [`Authorization: Bearer ${key.key.slice(0, 20)}\nX-Other: 1`]],
      ["obsolete line folding", ["Authorization: Bearer", ` ${key.key}`]],
      ["two Authorization headers, the first bad", ["Authorization: Basic abc", `Authorization: Bearer ${key.key}`]],
      ["two Authorization headers, both bad", ["Authorization: Bearer a", "Authorization: Bearer b"]],
      ["a header without a name", [": Bearer abc"]],
      ["a name with a space", ["Authorization : Bearer abc"]],
      ["a NUL in the name", ["Author\x00ization: Bearer abc"]],
      ["a non-ASCII name", ["Authorizätion: Bearer abc"]]
    ]
    for (const route of routes) {
      for (const [what, lines] of cases) {
        const outcome = await viaSocket(route, lines)
        checkRefused(outcome, route, what, lines.join("").length)
      }
    }
  })

  it("the valid key still passes, with the blanks the format allows; the gateway logged no failure of its own", async () => {
    for (const authorization of [`Bearer ${key.key}`, `bearer ${key.key}`, `Bearer\t${key.key}`, `Bearer  ${key.key}  `, `BEARER ${key.key}`]) {
      const answer = await viaHttp("/inference", authorization)
      expect(answer.status, `${JSON.stringify(authorization)}: ${answer.body}`).toBe(200)
    }
    expect((await call(gateway, "GET", "/status")).status).toBe(200)
    expect(gateway.log()).not.toContain("request failed unexpectedly")
    expect(gateway.log()).not.toContain(key.secret)
  })
})
