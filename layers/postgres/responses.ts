/**
 * Stored responses' deletions on Postgres (`ResponseDeletionStore` of
 * src/openaiResponses/store.ts), in the `response_deletion` table
 * (migrations/postgres/0021_response_deletions.sql).
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import { distinctUuids, isUuid } from "../../src/ids.ts"
import type { ResponseDeletionStore } from "../../src/openaiResponses/store.ts"
import { notAUuid, storeError } from "./client.ts"

export const makePostgresResponseDeletionStore = (sql: PgClient.PgClient): ResponseDeletionStore => ({
  backend: "postgres",
  markDeleted: (workspace, inferenceId, atMs) =>
    isUuid(inferenceId)
      ? sql`INSERT INTO response_deletion (inference_id, deleted_at, workspace) VALUES (${inferenceId}::uuid, ${new Date(atMs)}, ${workspace})
          ON CONFLICT (inference_id) DO NOTHING`.pipe(Effect.asVoid, Effect.mapError(storeError("markResponseDeleted")))
      : Effect.fail(notAUuid(inferenceId)),
  deleted: (workspace, inferenceIds) => {
    const ids = distinctUuids(inferenceIds)
    if (ids.length === 0) return Effect.succeed(new Set<string>())
    return sql<{ id: string }>`SELECT inference_id::text AS id FROM response_deletion WHERE inference_id = ANY(${ids}::uuid[])
      AND workspace = ${workspace}`.pipe(
      Effect.map((rows): ReadonlySet<string> => new Set(rows.map((row) => row.id))),
      Effect.mapError(storeError("deletedResponses"))
    )
  }
})
