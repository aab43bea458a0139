/**
 * Stored responses' deletions on ClickHouse (`ResponseDeletionStore` of
 * src/openaiResponses/store.ts), in the `ResponseDeletion` table
 * (migrations/clickhouse/0013_response_deletions.sql): written directly, not through the write
 * queue, since the DELETE's answer promises it.
 */
import { Buffer } from "node:buffer"
import { distinctUuids } from "../../src/ids.ts"
import type { ResponseDeletionStore } from "../../src/openaiResponses/store.ts"
import type { ClickHouse } from "./client.ts"
import { sqlString, sqlUuid, sqlUuids } from "./sql.ts"

export const makeClickHouseResponseDeletionStore = ({ insert, run, select }: ClickHouse): ResponseDeletionStore => ({
  backend: "clickhouse",
  markDeleted: (workspace, inferenceId, atMs) =>
    run("markResponseDeleted", async (signal) => {
      sqlUuid(inferenceId) // refused unless a UUID
      const row = { inference_id: inferenceId.toLowerCase(), deleted_at_ms: atMs, workspace }
      await insert("ResponseDeletion", [Buffer.from(JSON.stringify(row))], signal)
    }),
  deleted: (workspace, inferenceIds) =>
    run("deletedResponses", async (signal) => {
      const ids = distinctUuids(inferenceIds)
      if (ids.length === 0) return new Set<string>()
      const rows = await select<{ id: string }>(`SELECT DISTINCT toString(inference_id) AS id FROM ResponseDeletion ` +
          `WHERE inference_id IN ${sqlUuids(ids)} AND workspace = ${sqlString(workspace)}`, signal)
      return new Set(rows.map((row) => row.id))
    })
})
