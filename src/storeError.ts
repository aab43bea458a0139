/**
 * How every storage port fails (the analytics database's, the relational database's, the rate
 * limit buckets'): one error, its message in one line, never a stack. Services turn it into the
 * answer their callers see (a 503 when the database is out, a 500 when a working database failed
 * this one request, a write retried by the queue).
 */
import * as Schema from "effect/Schema"

export class StoreError extends Schema.TaggedError<StoreError>()("StoreError", {
  message: Schema.String,
  /** the database's own code for the failure (a SQLSTATE, a ClickHouse error code), when it gave one */
  code: Schema.optional(Schema.String),
  /**
   * A write failed because of the rows themselves (the database refuses a value, or the batch
   * is too large to send): trying the same rows again cannot succeed. Any other failed write
   * (the database down, full, read-only, overloaded, timing out) may succeed later.
   */
  rowsAtFault: Schema.optional(Schema.Boolean),
  /**
   * The database cannot answer now: unreachable, refusing connections or the gateway's login,
   * shutting down, out of resources, read-only, timing out. A read that failed otherwise (a
   * stored row too large for the driver, a query the driver or the database refuses) failed
   * against a working database: not an outage, and trying again later will not help.
   */
  outage: Schema.optional(Schema.Boolean)
}) {}
