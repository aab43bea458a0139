/**
 * Which failures of a database are an outage (503) and which a failure of one request on a
 * working database (500): the mapping of each backend's errors (layers/postgres/client.ts,
 * layers/clickhouse/client.ts) and the answer the services give (src/analytics/stores.ts).
 */
import * as PgProtocol from "@effect/sql-pg/PgProtocol"
import { ConnectionError, SqlError, StatementTimeoutError, UnknownError } from "effect/sql/SqlError"
import { describe, expect, it } from "vitest"
import { storeError as clickHouseStoreError } from "../../layers/clickhouse/client.ts"
import { storeError as postgresStoreError } from "../../layers/postgres/client.ts"
import { storeFailure } from "../../src/analytics/stores.ts"

const withState = (code: string) => Object.assign(new Error(`failed with ${code}`), { code })

describe("Postgres failures", () => {
  const mapped = (reason: SqlError["reason"]) => postgresStoreError("listInferences")(new SqlError({ reason }))

  it("a row over the driver's maxMessageSize is not an outage, and says so", () => {
    const cause = new PgProtocol.ParseError({ message: "Message length 19000365 exceeds maxMessageSize 16777216" })
    const error = mapped(new ConnectionError({ cause, message: "PgConnection: Failed to parse server messages", operation: "query" }))
    expect(error.outage).toBe(false)
    expect(error.message).toBe(
      "postgres listInferences failed: a stored row is larger than the driver reads (Message length 19000365 exceeds maxMessageSize 16777216)"
    )
  })

  it("a connection lost or refused, a timeout, a database out of resources or shutting down is an outage", () => {
    expect(mapped(new ConnectionError({ cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }) })).outage).toBe(true)
    expect(mapped(new StatementTimeoutError({ cause: withState("57014") })).outage).toBe(true)
    for (const code of ["53100", "53300", "57P01", "58030", "25006", "40001"]) expect(mapped(new UnknownError({ cause: withState(code) })).outage, code).toBe(true)
  })

  it("a value or a query the database refuses is not an outage", () => {
    for (const code of ["22P02", "54000", "XX000"]) expect(mapped(new UnknownError({ cause: withState(code) })).outage, code).toBe(false)
    expect(mapped(new UnknownError({ cause: new Error("Failed to decode row") })).outage).toBe(false)
  })
})

describe("ClickHouse failures", () => {
  const mapped = (error: unknown) => clickHouseStoreError("listInferences")(error)

  it("a socket error and the codes of a server overloaded, read-only or refusing the user are an outage", () => {
    expect(mapped(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:8123"), { code: "ECONNREFUSED" })).outage).toBe(true)
    expect(mapped(new Error("Code: 241, e.displayText() = DB::Exception: Memory limit exceeded")).outage).toBe(true)
    expect(mapped(new Error("Code: 516, e.displayText() = DB::Exception: default: Authentication failed")).outage).toBe(true)
  })

  it("a query the server refuses, and an answer too large for a string, are not", () => {
    expect(mapped(new Error("Code: 62, e.displayText() = DB::Exception: Syntax error")).outage).toBe(false)
    expect(mapped(new Error("The response length exceeds the maximum allowed size of a string: 536870888 characters.")).outage).toBe(false)
    expect(mapped(new RangeError("Invalid string length")).outage).toBe(false)
  })
})

describe("the answer of a failed read", () => {
  const store = { backend: "postgres" } as const

  it("is a 503 naming the database when it is out, a 500 when it failed this request", () => {
    const down = storeFailure(store)(postgresStoreError("listInferences")(new SqlError({ reason: new ConnectionError({ cause: new Error("Connection closed") }) })))
    expect(down.status).toBe(503)
    expect(down.message).toBe("the postgres database is unavailable: postgres listInferences failed: Connection closed")
    const cause = new PgProtocol.ParseError({ message: "Message length 19000365 exceeds maxMessageSize 16777216" })
    const tooLarge = storeFailure(store)(postgresStoreError("listInferences")(new SqlError({ reason: new ConnectionError({ cause }) })))
    expect(tooLarge.status).toBe(500)
    expect(tooLarge.message).toMatch(/^the postgres database failed this request: postgres listInferences failed: a stored row is larger than the driver reads/)
  })
})
