/** Feedback on ClickHouse (`FeedbackStore` of src/feedback/store.ts): one table per kind of feedback, read within a workspace. */
import { isUuid } from "../../src/ids.ts"
import type { FeedbackStore } from "../../src/feedback/store.ts"
import type { FeedbackKind } from "../../src/analytics/records.ts"
import type { ClickHouse } from "./client.ts"
import { feedbackKinds, type FeedbackRow, toFeedback } from "./rows.ts"
import { sqlString, sqlUuids } from "./sql.ts"

const byId = <A extends { readonly id: string }>(a: A, b: A) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

export const makeClickHouseFeedbackStore = ({ run, select }: ClickHouse): FeedbackStore => ({
  backend: "clickhouse",
  getFeedback: (workspace, targetIds) =>
    run("getFeedback", async (signal) => {
      const valid = targetIds.filter(isUuid)
      if (valid.length === 0) return []
      const kinds = Object.keys(feedbackKinds) as Array<FeedbackKind>
      const found = await Promise.all(kinds.map(async (kind) => {
        const rows = await select<FeedbackRow>(
          `SELECT * FROM ${feedbackKinds[kind].table} WHERE target_id IN ${sqlUuids(valid)} AND workspace = ${sqlString(workspace)} LIMIT 1 BY id`,
          signal
        )
        return rows.map(toFeedback(kind))
      }))
      return found.flat().sort(byId)
    })
})
