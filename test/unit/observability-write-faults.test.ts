/** Which failed writes the write queue may drop (src/analytics/writeFaults.ts): only the rows' own faults. */
import { describe, expect, it } from "vitest"
import { ClickHouseError } from "@clickhouse/client"
import {
  clickHouseDataErrors,
  clickHouseErrorCode,
  clickHouseRowsAtFault,
  isTooLargeForAString,
  postgresRowsAtFault
} from "../../src/analytics/writeFaults.ts"

describe("postgresRowsAtFault", () => {
  it("blames the rows for data exceptions (22), integrity violations (23) and a value over a hard limit (54000)", () => {
    for (
      const code of [
        "22001", // string_data_right_truncation
        "22003", // numeric_value_out_of_range
        "22021", // character_not_in_repertoire
        "22P02", // invalid_text_representation
        "22P05", // untranslatable_character
        "23502", // not_null_violation
        "23503", // foreign_key_violation
        "23514", // check_violation
        "54000" // program_limit_exceeded (a JSONB value over 255 MB)
      ]
    ) expect(postgresRowsAtFault(code), code).toBe(true)
  })

  it("retries everything else: the database full, timing out, read-only, locked, down, refusing the user", () => {
    for (
      const code of [
        "53100", // disk_full
        "53200", // out_of_memory
        "53300", // too_many_connections
        "57014", // query_canceled (statement_timeout)
        "57P01", // admin_shutdown
        "57P03", // cannot_connect_now
        "25006", // read_only_sql_transaction (a replica after failover)
        "55P03", // lock_not_available (lock_timeout)
        "40001", // serialization_failure
        "40P01", // deadlock_detected
        "42501", // insufficient_privilege
        "42P01", // undefined_table (migrations not applied yet)
        "08006", // connection_failure
        "54001", // statement_too_complex: the statement, not the rows
        "XX000", // internal_error
        "ECONNREFUSED",
        "ECONNRESET",
        "2200", // not a SQLSTATE
        undefined
      ]
    ) expect(postgresRowsAtFault(code), String(code)).toBe(false)
  })
})

describe("clickHouseRowsAtFault", () => {
  it("blames the rows for parse, type, NULL and constraint errors", () => {
    for (const code of [6, 27, 53, 72, 117, 131, 349, 376, 469, 691]) expect(clickHouseRowsAtFault(code), String(code)).toBe(true)
    expect(clickHouseDataErrors.get(349)).toBe("CANNOT_INSERT_NULL_IN_ORDINARY_COLUMN")
  })

  it("retries errors about the server's state, and unknown codes", () => {
    for (
      const code of [
        159, // TIMEOUT_EXCEEDED
        164, // READONLY
        202, // TOO_MANY_SIMULTANEOUS_QUERIES
        209, // SOCKET_TIMEOUT
        210, // NETWORK_ERROR
        241, // MEMORY_LIMIT_EXCEEDED
        242, // TABLE_IS_READ_ONLY
        243, // NOT_ENOUGH_SPACE
        252, // TOO_MANY_PARTS
        33, // CANNOT_READ_ALL_DATA: also an upload cut short
        60, // UNKNOWN_TABLE
        81, // UNKNOWN_DATABASE
        497, // ACCESS_DENIED
        516, // AUTHENTICATION_FAILED
        1000, // POCO_EXCEPTION
        undefined
      ]
    ) expect(clickHouseRowsAtFault(code), String(code)).toBe(false)
  })
})

describe("clickHouseErrorCode", () => {
  it("reads the client's parsed code, or the code an 18.16 server's message starts with", () => {
    expect(clickHouseErrorCode(new ClickHouseError({ message: "Too many parts", code: "252", type: "TOO_MANY_PARTS" }))).toBe(252)
    expect(clickHouseErrorCode(new Error("Code: 349, e.displayText() = DB::Exception: Cannot convert NULL value to non-Nullable type, e.what() = DB::Exception")))
      .toBe(349)
  })

  it("finds none in a socket error or a value that is not an error", () => {
    expect(clickHouseErrorCode(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:8123"), { code: "ECONNREFUSED" }))).toBeUndefined()
    expect(clickHouseErrorCode("Code: 27")).toBeUndefined()
    expect(clickHouseErrorCode(undefined)).toBeUndefined()
  })
})

describe("isTooLargeForAString", () => {
  it("recognizes V8's errors for a string or buffer too large", () => {
    let thrown: unknown
    try {
      "x".repeat(2 ** 30)
    } catch (error) {
      thrown = error
    }
    expect(isTooLargeForAString(thrown)).toBe(true)
    expect(isTooLargeForAString(new RangeError("Invalid string length"))).toBe(true)
    expect(isTooLargeForAString(new RangeError("Maximum call stack size exceeded"))).toBe(false)
    expect(isTooLargeForAString(new Error("Invalid string length"))).toBe(false)
  })
})
