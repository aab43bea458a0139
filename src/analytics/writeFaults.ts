/**
 * Which failed writes are the rows' own fault, per backend. The write queue retries a failed
 * batch until it is stored (new writes are dropped past the queue's bound meanwhile), except
 * when the database refuses the rows themselves: trying those again cannot succeed, so the
 * batch is split to find them and only they are dropped. Anything else (the database down,
 * full, read-only after a failover, overloaded, timing out, locked, refusing the gateway's
 * user, a table missing) may pass later, and dropping good rows for it would lose data.
 */

/**
 * Postgres, by SQLSTATE: class 22 (data exception: a value the column cannot hold) and class
 * 23 (integrity constraint violation: a CHECK, NOT NULL or foreign key the row breaks), and
 * 54000 program_limit_exceeded (a value over a hard limit, such as a JSONB document over
 * 255 MB). Connection errors carry Node's codes (ECONNRESET...), which are not SQLSTATEs.
 */
export const postgresRowsAtFault = (sqlState: string | undefined): boolean =>
  sqlState !== undefined && (/^2[23][0-9A-Z]{3}$/.test(sqlState) || sqlState === "54000")

/**
 * ClickHouse error codes that mean the rows cannot be parsed into or stored in their columns
 * (the server's own list of parse errors, and the conversions and constraints an INSERT
 * checks). Not among them: CANNOT_READ_ALL_DATA (33), which an upload cut short by the
 * network gives too, and every error about the server's state (TIMEOUT_EXCEEDED 159, READONLY
 * 164, MEMORY_LIMIT_EXCEEDED 241, TABLE_IS_READ_ONLY 242, NOT_ENOUGH_SPACE 243, TOO_MANY_PARTS
 * 252, UNKNOWN_TABLE 60, ACCESS_DENIED 497...).
 */
export const clickHouseDataErrors: ReadonlyMap<number, string> = new Map([
  [6, "CANNOT_PARSE_TEXT"],
  [25, "CANNOT_PARSE_ESCAPE_SEQUENCE"],
  [26, "CANNOT_PARSE_QUOTED_STRING"],
  [27, "CANNOT_PARSE_INPUT_ASSERTION_FAILED"],
  [38, "CANNOT_PARSE_DATE"],
  [41, "CANNOT_PARSE_DATETIME"],
  [53, "TYPE_MISMATCH"],
  [69, "ARGUMENT_OUT_OF_BOUND"],
  [70, "CANNOT_CONVERT_TYPE"],
  [72, "CANNOT_PARSE_NUMBER"],
  [117, "INCORRECT_DATA"],
  [128, "TOO_LARGE_ARRAY_SIZE"],
  [130, "CANNOT_READ_ARRAY_FROM_TEXT"],
  [131, "TOO_LARGE_STRING_SIZE"],
  [190, "SIZES_OF_ARRAYS_DOESNT_MATCH"],
  [321, "VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE"],
  [349, "CANNOT_INSERT_NULL_IN_ORDINARY_COLUMN"],
  [376, "CANNOT_PARSE_UUID"],
  [407, "DECIMAL_OVERFLOW"],
  [441, "CANNOT_PARSE_DOMAIN_VALUE_FROM_STRING"],
  [467, "CANNOT_PARSE_BOOL"],
  [469, "VIOLATED_CONSTRAINT"],
  [691, "UNKNOWN_ELEMENT_OF_ENUM"]
])

export const clickHouseRowsAtFault = (code: number | undefined): boolean => code !== undefined && clickHouseDataErrors.has(code)

/**
 * The ClickHouse error code of a failed request: the client's parsed `code`, or the `Code: N`
 * the server's message starts with (18.16's messages do not parse into the client's errors).
 * Socket errors (ECONNREFUSED...) have none.
 */
export const clickHouseErrorCode = (error: unknown): number | undefined => {
  if (typeof error !== "object" || error === null) return undefined
  const code = (error as { code?: unknown }).code
  if (typeof code === "string" && /^\d+$/.test(code)) return Number(code)
  const message = (error as { message?: unknown }).message
  const found = typeof message === "string" ? /\bCode: (\d+)/.exec(message) : null
  return found === null ? undefined : Number(found[1])
}

/** A batch too large for a JavaScript string (V8's limit is about 2^29 characters): the rows' own fault. */
export const isTooLargeForAString = (error: unknown): boolean =>
  error instanceof RangeError && /Invalid string length|Invalid array length|Array buffer allocation failed/i.test(error.message)
