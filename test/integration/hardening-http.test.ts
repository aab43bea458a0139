/**
 * Hardening of the HTTP server (issue 10), over real sockets:
 * - slow uploads: the bytes of request bodies being received at once are bounded
 *   (`max_request_bytes_in_flight`): past it, 503 with Retry-After at once; the bytes come back
 *   when the stalled clients go away or are cut after `request_read_timeout_ms`;
 * - a body over `max_request_body_bytes` gets its 413 without being read whole;
 * - past `max_connections` open connections new ones are refused, and served again once
 *   connections close;
 * - with authentication on, /status and /health (open to anyone) say no more than ok/error:
 *   the database's error text goes to the log, once per change.
 */
import * as net from "node:net"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { rawRequest, type RunningGateway, startGateway } from "../support/gateway.ts"
import { observabilityToml, poll } from "../support/observability.ts"
import { startTcpProxy, type TcpProxy } from "../support/tcpProxy.ts"

const maxBodyBytes = 1_000_000
const budgetBytes = 1_048_576
const readTimeoutMs = 4_000
const maxConnections = 40

const config = `
[gateway]
max_request_body_bytes = ${maxBodyBytes}
max_request_bytes_in_flight = ${budgetBytes}
request_read_timeout_ms = ${readTimeoutMs}
max_connections = ${maxConnections}
`

/** a valid /inference body of exactly `bytes` bytes */
const bodyOfSize = (bytes: number): string => {
  const base = JSON.stringify({ model_name: "dummy::hello", input: { system: "" } })
  return base.replace(`"system":""`, `"system":"${"a".repeat(bytes - base.length)}"`)
}

interface Answer {
  readonly status: number
  readonly head: string
  readonly body: string
}

/** A client on a socket of its own, that sends what it is given and never ends its request by itself. */
interface Upload {
  readonly socket: net.Socket
  /** the answer, once it has come whole; undefined while none has */
  answer: Answer | undefined
  /** whether the gateway (or the client) has closed the connection */
  closed: boolean
  readonly connected: Promise<void>
  readonly ended: Promise<void>
}

const sockets = new Set<net.Socket>()

/** opens a connection and sends `head` and `body` (a part of the body, when the upload is to stall) */
const openUpload = (url: string, head: string, body = ""): Upload => {
  const { hostname, port } = new URL(url)
  const socket = net.connect({ host: hostname, port: Number(port) })
  sockets.add(socket)
  let received = ""
  const upload: Upload = {
    socket,
    answer: undefined,
    closed: false,
    connected: new Promise((resolve) => socket.once("connect", () => resolve())),
    ended: new Promise((resolve) => socket.once("close", () => resolve()))
  }
  socket.on("error", () => {})
  socket.on("data", (data) => {
    received += data.toString("latin1")
    const end = received.indexOf("\r\n\r\n")
    if (end === -1 || upload.answer !== undefined) return
    const headText = received.slice(0, end)
    const length = Number(/content-length: (\d+)/i.exec(headText)?.[1] ?? 0)
    const bodyText = received.slice(end + 4)
    if (bodyText.length >= length) {
      upload.answer = { status: Number(headText.split(" ")[1]), head: headText.toLowerCase(), body: bodyText.slice(0, length) }
    }
  })
  socket.once("close", () => {
    upload.closed = true
    sockets.delete(socket)
  })
  socket.write(head + body)
  return upload
}

const postHead = (headers: Record<string, string | number>) =>
  `POST /inference HTTP/1.1\r\nhost: gateway\r\ncontent-type: application/json\r\n${
    Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join("")
  }\r\n`

/** `count` uploads declaring `declared` bytes, each sending `sent` of them and stalling, opened one after another */
const stalledUploads = async (url: string, count: number, declared: number, sent: number): Promise<Array<Upload>> => {
  const uploads: Array<Upload> = []
  for (let i = 0; i < count; i++) {
    const upload = openUpload(url, postHead({ "content-length": declared }), bodyOfSize(declared).slice(0, sent))
    await upload.connected
    uploads.push(upload)
  }
  return uploads
}

/** a chunk of a chunked body */
const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`

/** a whole request over a connection of its own: status and body */
const post = async (url: string, body: string) => {
  const response = await rawRequest(url + "/inference", { method: "POST", headers: { "content-type": "application/json" }, body })
  return { status: response.status, text: response.text }
}

const expectBusy = (answer: Answer | undefined) => {
  expect(answer?.status, answer?.body).toBe(503)
  expect(answer!.head).toContain("retry-after: 1")
  expect(JSON.parse(answer!.body).error).toMatch(/max_request_bytes_in_flight/)
}

/** the budget is whole again: a body needing nearly all of it is answered (polled: closes reach the gateway a little later) */
const budgetBack = (url: string) =>
  poll("a body of nearly the whole budget to be answered", async () => {
    const answer = await post(url, bodyOfSize(maxBodyBytes))
    return answer.status === 200 ? answer : undefined
  }, { timeoutMs: 5_000 })

describe("slow uploads, oversized bodies and connection floods", () => {
  let gateway: RunningGateway

  beforeAll(async () => {
    gateway = await startGateway({ config })
  })
  afterAll(async () => {
    await gateway?.stop()
  })
  afterEach(() => {
    for (const socket of sockets) socket.destroy()
  })

  it("declared bodies: past the budget, stalled uploads are refused with 503 and Retry-After at once; a small request still passes; the budget comes back once they are cut", async () => {
    // 5 uploads of 200 kB fit in the budget of 1 MiB, leaving 48 kB; the other 15 do not
    const uploads = await stalledUploads(gateway.url, 20, 200_000, 150_000)
    await poll("15 uploads to be refused", async () =>
      uploads.filter((upload) => upload.answer !== undefined).length >= 15 ? true : undefined)
    const [held, refused] = [uploads.filter((upload) => upload.answer === undefined), uploads.filter((upload) => upload.answer !== undefined)]
    expect(refused).toHaveLength(15)
    for (const upload of refused) expectBusy(upload.answer)

    // a small request fits in what is left; one of 100 kB does not
    const small = await post(gateway.url, bodyOfSize(300))
    expect(small.status, small.text).toBe(200)
    const tooMuch = await post(gateway.url, bodyOfSize(100_000))
    expect(tooMuch.status, tooMuch.text).toBe(503)
    // the held uploads are still waiting for their last bytes
    expect(held.every((upload) => upload.answer === undefined && !upload.closed)).toBe(true)

    for (const upload of uploads) upload.socket.destroy()
    expect((await budgetBack(gateway.url)).status).toBe(200)
  })

  it("chunked bodies count as their bytes arrive: past the budget, 503; the budget comes back once the clients are cut", async () => {
    const uploads: Array<Upload> = []
    for (let i = 0; i < 20; i++) {
      const upload = openUpload(gateway.url, postHead({ "transfer-encoding": "chunked" }), chunk(bodyOfSize(200_000).slice(0, 100_000)))
      await upload.connected
      uploads.push(upload)
    }
    // at most 10 uploads of 100 kB fit in 1 MiB
    await poll("at least 10 uploads to be refused", async () =>
      uploads.filter((upload) => upload.answer !== undefined).length >= 10 ? true : undefined)
    for (const upload of uploads) if (upload.answer !== undefined) expectBusy(upload.answer)

    for (const upload of uploads) upload.socket.destroy()
    expect((await budgetBack(gateway.url)).status).toBe(200)
  })

  it("uploads that never finish are cut after request_read_timeout_ms, and the budget comes back", async () => {
    const uploads = await stalledUploads(gateway.url, 5, 200_000, 10_000)
    await poll("the budget to be taken", async () => ((await post(gateway.url, bodyOfSize(100_000))).status === 503 ? true : undefined))
    // the gateway, not the client, ends them
    await Promise.all(uploads.map((upload) => upload.ended))
    for (const upload of uploads) expect(upload.answer?.status ?? 408).toBe(408)
    expect((await budgetBack(gateway.url)).status).toBe(200)
  })

  it("a body over the limit gets its 413 without being read whole: declared, or chunked and stalled", async () => {
    const declared = openUpload(gateway.url, postHead({ "content-length": 50_000_000 }), "{")
    const chunked = openUpload(gateway.url, postHead({ "transfer-encoding": "chunked" }), chunk(bodyOfSize(maxBodyBytes + 100_000).slice(0, maxBodyBytes + 1)))
    await poll("both to be answered", async () => (declared.answer !== undefined && chunked.answer !== undefined ? true : undefined))
    for (const upload of [declared, chunked]) {
      expect(upload.answer!.status, upload.answer!.body).toBe(413)
      expect(JSON.parse(upload.answer!.body).error).toContain(`${maxBodyBytes} bytes`)
    }
    expect((await post(gateway.url, bodyOfSize(300))).status).toBe(200)
  })

  it("past max_connections new connections are refused; the gateway answers once connections close", async () => {
    const idle: Array<Upload> = []
    for (let i = 0; i < maxConnections + 5; i++) {
      const upload = openUpload(gateway.url, "")
      await upload.connected
      idle.push(upload)
    }
    // the gateway closes the connections past the limit at once (some of the limit may be other clients')
    await poll("the extra connections to be closed", async () => (idle.filter((upload) => upload.closed).length >= 5 ? true : undefined))
    await expect(rawRequest(gateway.url + "/status")).rejects.toThrow()

    for (const upload of idle) upload.socket.destroy()
    const status = await poll("the gateway to answer again", async () => {
      const answer = await rawRequest(gateway.url + "/status").catch(() => undefined)
      return answer?.status === 200 ? answer : undefined
    }, { timeoutMs: 5_000 })
    expect(JSON.parse(status.text).status).toBe("ok")
  })
})

describe("with authentication on, /status and /health answer anyone but say little", () => {
  let database: TestDatabase
  let proxy: TcpProxy
  let gateway: RunningGateway

  beforeAll(async () => {
    database = await freshDatabase("postgres")
    const url = new URL(database.url)
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) })
    gateway = await startGateway({
      config: `${observabilityToml()}\n[gateway.auth]\nenabled = true\n`,
      env: { GATEWAY_RELATIONAL_DB_URL: database.url, GATEWAY_ANALYTICS_DB_URL: proxy.urlFor(database.url) }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await proxy?.close()
    await database?.drop()
  })

  const get = async (route: string) => {
    const response = await rawRequest(gateway.url + route)
    return { status: response.status, text: response.text, body: JSON.parse(response.text) }
  }

  it("/status is {status, version, config} only, without the queue's counters", async () => {
    expect(await get("/status")).toMatchObject({ status: 200, body: { status: "ok", version: "0.1.0", config: { hash: expect.stringMatching(/^[0-9a-f]{64}$/) } } })
    expect(Object.keys((await get("/status")).body).sort()).toEqual(["config", "status", "version"])
  })

  it("/health says postgres is down without the error's text, logs it once, and says ok again once it is back", async () => {
    expect(await get("/health")).toMatchObject({ status: 200, body: { gateway: "ok", postgres: "ok", relational_database: "ok" } })
    proxy.cut()
    try {
      for (let probe = 0; probe < 3; probe++) {
        const health = await get("/health")
        expect(health.status).toBe(503)
        expect(health.body).toEqual({ gateway: "ok", postgres: "error", relational_database: "ok" })
        expect(health.text).not.toMatch(/ECONNREFUSED|ECONNRESET|127\.0\.0\.1|closed|failed/)
      }
      const downLines = gateway.log().split("\n").filter((line) => line.includes("database does not answer"))
      expect(downLines).toHaveLength(1)
      expect(downLines[0]).toMatch(/postgres/)
    } finally {
      proxy.restore()
    }
    await poll("/health to be ok again", async () => ((await get("/health")).status === 200 ? true : undefined))
    expect((await get("/health")).body).toEqual({ gateway: "ok", postgres: "ok", relational_database: "ok" })
    expect(gateway.log().split("\n").filter((line) => line.includes("database answers again"))).toHaveLength(1)
  })
})
