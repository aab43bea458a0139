/**
 * Readiness for a load balancer (issue 38, "Many gateways"): `GET /health` probes the analytics
 * and the relational databases and answers 503 while one does not answer; on SIGTERM with
 * `[gateway] drain_delay_ms`, it answers 503 `{"gateway": "draining"}` at once while requests
 * are still served (with `Connection: close`, so that keep-alive clients reconnect elsewhere),
 * and only then does the listener close. A real gateway process on a real Postgres.
 */
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { dummyInference, pollUntil } from "../support/access.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { startTcpProxy, type TcpProxy } from "../support/tcpProxy.ts"

const drainDelayMs = 2_000

/** one request on a keep-alive connection (as a load balancer's or an SDK's pool), answering status, body and `connection` */
const keepAliveRequest = (agent: http.Agent, url: string, body?: unknown) =>
  new Promise<{ status: number; body: any; connection: string | undefined }>((resolve, reject) => {
    const request = http.request(url, {
      method: body === undefined ? "GET" : "POST",
      agent,
      headers: body === undefined ? {} : { "content-type": "application/json" }
    }, (response) => {
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (data) => (text += data))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text), connection: response.headers.connection }))
    })
    request.on("error", reject)
    if (body !== undefined) request.write(JSON.stringify(body))
    request.end()
  })

describe("GET /health for a load balancer", () => {
  let database: TestDatabase
  let proxy: TcpProxy
  let gateway: RunningGateway
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })

  beforeAll(async () => {
    database = await freshDatabase("postgres")
    const url = new URL(database.url)
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) })
    gateway = await startGateway({
      config: `[gateway]\ndrain_delay_ms = ${drainDelayMs}\n`,
      // the relational database through the proxy, to cut it; the analytics one direct
      env: { GATEWAY_RELATIONAL_DB_URL: proxy.urlFor(database.url), GATEWAY_ANALYTICS_DB_URL: database.url }
    })
  })
  afterAll(async () => {
    agent.destroy()
    await gateway?.stop("SIGKILL")
    await proxy?.close()
    await database?.drop()
  })

  it("answers 503 naming the relational database while it does not answer, and 200 once it is back", async () => {
    expect(await keepAliveRequest(agent, gateway.url + "/health")).toMatchObject({
      status: 200,
      body: { gateway: "ok", postgres: "ok", relational_database: "ok" }
    })
    proxy.cut()
    try {
      const down = await keepAliveRequest(agent, gateway.url + "/health")
      expect(down.status).toBe(503)
      expect(down.body).toMatchObject({ gateway: "ok", postgres: "ok", relational_database: "error" })
      expect(down.body.error).toMatch(/^relational_database: /)
    } finally {
      proxy.restore()
    }
    await pollUntil(() => keepAliveRequest(agent, gateway.url + "/health"), (answer) => answer.status === 200, 10_000)
    expect(gateway.log()).toMatch(/the relational_database database does not answer/)
  })

  it("on SIGTERM: 503 draining at once, requests still served with Connection: close, then the listener closes and the process exits 0", async () => {
    const before = await keepAliveRequest(agent, gateway.url + "/inference", dummyInference())
    expect(before).toMatchObject({ status: 200, connection: "keep-alive" })

    const stoppedAt = Date.now()
    const exited = gateway.stop("SIGTERM")
    const draining = await pollUntil(() => keepAliveRequest(agent, gateway.url + "/health"), (answer) => answer.status === 503, 5_000)
    expect(draining.value.body).toEqual({ gateway: "draining" })
    expect(draining.value.connection).toBe("close")

    // still serving: an inference during the drain is answered, and its connection is not kept
    const during = await keepAliveRequest(agent, gateway.url + "/inference", dummyInference())
    expect(during).toMatchObject({ status: 200, connection: "close" })
    expect(during.body.content[0].type).toBe("text")

    // then the listener closes: new connections are refused, and the process exits cleanly
    await pollUntil(
      () => keepAliveRequest(agent, gateway.url + "/health").then(() => "answered", (error: NodeJS.ErrnoException) => error.code ?? "error"),
      (outcome) => outcome === "ECONNREFUSED",
      drainDelayMs + 10_000
    )
    expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(drainDelayMs)
    expect(await exited).toBe(0)
    expect(gateway.log()).toMatch(new RegExp(`draining: /health answers 503 for ${drainDelayMs} ms`))
  })
})
