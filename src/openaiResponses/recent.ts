/**
 * Responses stored a moment ago, in this process (issue 37, design 4): rows are written by the
 * write queue after the answer, and an agent's next call (`previous_response_id`) can arrive
 * first. Bounded by count and by age: an entry only has to outlive the write queue's delay, the
 * store answers after that.
 */
import type { ResponseRecord } from "./stored.ts"

export interface RecentResponsesLimits {
  readonly entries: number
  readonly ageMs: number
}

export const recentResponsesLimits: RecentResponsesLimits = { entries: 256, ageMs: 60_000 }

export interface RecentResponses {
  readonly remember: (record: ResponseRecord, nowMs: number) => void
  readonly get: (id: string, nowMs: number) => ResponseRecord | undefined
  readonly forget: (id: string) => void
}

export const makeRecentResponses = (limits: RecentResponsesLimits = recentResponsesLimits): RecentResponses => {
  // insertion order is age order: the oldest entries are the first ones
  const entries = new Map<string, { readonly record: ResponseRecord; readonly at: number }>()
  const evict = (nowMs: number) => {
    for (const [id, entry] of entries) {
      if (entries.size <= limits.entries && nowMs - entry.at <= limits.ageMs) break
      entries.delete(id)
    }
  }
  return {
    remember: (record, nowMs) => {
      entries.delete(record.id)
      entries.set(record.id, { record, at: nowMs })
      evict(nowMs)
    },
    get: (id, nowMs) => {
      evict(nowMs)
      return entries.get(id)?.record
    },
    forget: (id) => {
      entries.delete(id)
    }
  }
}
