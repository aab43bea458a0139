/**
 * The analytics database on ClickHouse (`ObservabilityDatabase` of
 * src/analytics/database.ts): migrations, the health probe, and the write queue's writes.
 */
import * as Effect from "effect/Effect"
import { type EncodedRow, type ObservabilityDatabase, textsByTable } from "../../src/analytics/database.ts"
import { type ClickHouse, writeError } from "./client.ts"
import { migrate } from "./migrator.ts"
import { encode, inferenceTables } from "./rows.ts"

/** `clusterName`: the replicated cluster the migrations run on (GATEWAY_CLICKHOUSE_CLUSTER_NAME), if any */
export const makeClickHouseDatabase = (clickhouse: ClickHouse, maxRowBytes: number, clusterName?: string): ObservabilityDatabase => {
  const { run, select, insert } = clickhouse

  // The lines are joined inside the promise: a batch too large for a string fails the write.
  // ClickHouse has no transaction across tables: the inference tables are written last, so
  // that an inference a reader can see always has its model inferences.
  const write = (rows: ReadonlyArray<EncodedRow>) =>
    rows.length === 0 ? Effect.void : Effect.tryPromise({
      try: async (signal) => {
        const tables = Array.from(textsByTable(rows))
        const insertAll = (batch: typeof tables) => Promise.all(batch.map(([table, lines]) => insert(table, lines, signal)))
        await insertAll(tables.filter(([table]) => !inferenceTables.has(table)))
        await insertAll(tables.filter(([table]) => inferenceTables.has(table)))
      },
      catch: writeError
    })

  return {
    backend: "clickhouse",
    migrate: migrate(clickhouse, clusterName),
    // a query rather than /ping, so that the credentials and the database are checked too
    ping: run("ping", (signal) => select("SELECT 1 AS ok", signal)).pipe(Effect.asVoid),
    encode: (batch) => encode(batch, maxRowBytes),
    write
  }
}
