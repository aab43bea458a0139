/**
 * The Overview's time ranges: the presets (the last hour, day, 7 or 30 days, ending now) and a
 * custom one, with the bucket each is drawn in unless the user picks one (a few dozen to a few
 * hundred points, within the gateway's 1,500).
 */
import type { OverviewBucket } from "../../../../src/api/uiOverview.ts"

export const rangePresets = [
  { value: "hour", label: "Last hour", ms: 3_600_000 },
  { value: "day", label: "Last 24 hours", ms: 86_400_000 },
  { value: "week", label: "Last 7 days", ms: 7 * 86_400_000 },
  { value: "month", label: "Last 30 days", ms: 30 * 86_400_000 }
] as const

export type RangeChoice = typeof rangePresets[number]["value"] | "custom"

export const bucketChoices: ReadonlyArray<{ value: OverviewBucket | ""; label: string }> = [
  { value: "", label: "Automatic" },
  { value: "minute", label: "Minute" },
  { value: "hour", label: "Hour" },
  { value: "day", label: "Day" }
]

/** `maxOverviewBuckets` of src/api/uiOverview.ts (a runtime import from there would bring Effect into the UI) */
const maxBuckets = 1500

const bucketMs: Record<OverviewBucket, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 }

/** the bucket that draws `[from, to)` in at most a few hundred points */
export const automaticBucket = (from: number, to: number): OverviewBucket => {
  const span = to - from
  return span <= 3 * 3_600_000 ? "minute" : span <= 8 * 86_400_000 ? "hour" : "day"
}

/** a `datetime-local` input's value (local time) as epoch milliseconds; undefined when empty or invalid */
export const fromLocalInput = (value: string): number | undefined => {
  if (value === "") return undefined
  const time = new Date(value).getTime()
  return Number.isNaN(time) ? undefined : time
}

/** epoch milliseconds as a `datetime-local` input's value, in local time, to the minute */
export const toLocalInput = (time: number): string => {
  const date = new Date(time)
  const pad = (n: number) => String(n).padStart(2, "0")
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`
}

export interface ResolvedRange {
  readonly from: number
  readonly to: number
  readonly bucket: OverviewBucket
}

/** the range to ask for now, or why it cannot be asked for */
export const resolveRange = (
  choice: RangeChoice,
  custom: { readonly from: string; readonly to: string },
  bucket: OverviewBucket | "",
  now: number
): ResolvedRange | { readonly problem: string } => {
  let from: number
  let to: number
  if (choice === "custom") {
    const start = fromLocalInput(custom.from)
    const end = fromLocalInput(custom.to)
    if (start === undefined || end === undefined) return { problem: "Enter both the start and the end of the range." }
    if (start >= end) return { problem: "The start of the range must be before its end." }
    ;[from, to] = [start, end]
  } else {
    const preset = rangePresets.find((candidate) => candidate.value === choice) ?? rangePresets[1]
    ;[from, to] = [now - preset.ms, now]
  }
  const chosen = bucket === "" ? automaticBucket(from, to) : bucket
  // as the gateway counts them: from the start of the bucket holding `from`
  const points = Math.ceil((to - Math.floor(from / bucketMs[chosen]) * bucketMs[chosen]) / bucketMs[chosen])
  if (points > maxBuckets) {
    return { problem: `A bucket of a ${chosen} makes ${points.toLocaleString()} points over this range, more than ${maxBuckets.toLocaleString()}: choose a wider bucket or a shorter range.` }
  }
  return { from, to, bucket: chosen }
}
