/** Feedback on Postgres (`FeedbackStore` of src/feedback/store.ts): one table per kind of feedback, read within a workspace. */
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import type { FeedbackStore } from "../../src/feedback/store.ts"
import { isUuid } from "../../src/ids.ts"
import type { FeedbackKind } from "../../src/analytics/records.ts"
import { storeError } from "./client.ts"
import { type FeedbackRow, feedbackTables, toFeedback } from "./rows.ts"

export const makePostgresFeedbackStore = (sql: PgClient.PgClient): FeedbackStore => {
  const feedbackColumns = sql.literal("id, workspace, target_id, target_type, metric_name, value, tags, timestamp")
  return {
    backend: "postgres",
    getFeedback: (workspace, targetIds) => {
      const valid = targetIds.filter(isUuid)
      if (valid.length === 0) return Effect.succeed([])
      return Effect.forEach(
        Object.entries(feedbackTables) as Array<[FeedbackKind, string]>,
        ([kind, table]) =>
          Effect.map(
            sql<FeedbackRow>`SELECT ${feedbackColumns} FROM ${sql(table)} WHERE target_id = ANY(${valid}::uuid[]) AND workspace = ${workspace}`,
            (rows) => rows.map(toFeedback(kind))
          ),
        { concurrency: "unbounded" }
      ).pipe(
        Effect.map((kinds) => kinds.flat().sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))),
        Effect.mapError(storeError("getFeedback"))
      )
    }
  }
}
