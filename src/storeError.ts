/**
 * How every storage port fails (the analytics database's, the relational database's, the rate
 * limit buckets'): one error, its message in one line, never a stack. Services turn it into the
 * answer their callers see (a 503 naming the database, a write retried by the queue).
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
  rowsAtFault: Schema.optional(Schema.Boolean)
}) {}
