/**
 * The Overview's arithmetic on the database's aggregates: 95% confidence intervals of a metric's
 * mean, and the buckets of a range (the databases answer only the buckets that hold inferences;
 * 18.16 has no `WITH FILL`).
 */

/** the normal quantile of a two-sided 95% interval */
const z = 1.96

export interface Interval {
  readonly lower: number
  readonly upper: number
}

/**
 * The Wilson score interval of a proportion `p` of `n` trials: unlike p ± z·√(p(1−p)/n), it
 * stays within [0, 1] and is not empty at p = 0 or 1, which small samples of feedback often are.
 */
export const wilsonInterval = (p: number, n: number): Interval | undefined => {
  if (n <= 0) return undefined
  const z2 = z * z
  const denominator = 1 + z2 / n
  const center = (p + z2 / (2 * n)) / denominator
  const half = (z / denominator) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))
  return { lower: Math.max(0, center - half), upper: Math.min(1, center + half) }
}

/** mean ± 1.96·sd/√n: the normal approximation, with the sample standard deviation; none below 2 values */
export const normalInterval = (mean: number, sd: number, n: number): Interval | undefined => {
  if (n < 2) return undefined
  const half = (z * sd) / Math.sqrt(n)
  return { lower: mean - half, upper: mean + half }
}

export const bucketWidths = { minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const

/** the start of the bucket holding `time`: a multiple of `width` since the epoch */
export const bucketStart = (time: number, width: number): number => Math.floor(time / width) * width

/** the starts of the buckets covering `[from, to)`, oldest first */
export const bucketStarts = (from: number, to: number, width: number): ReadonlyArray<number> => {
  const starts: Array<number> = []
  for (let start = bucketStart(from, width); start < to; start += width) starts.push(start)
  return starts
}

/** how many buckets cover `[from, to)` */
export const bucketCount = (from: number, to: number, width: number): number =>
  to <= from ? 0 : Math.ceil((to - bucketStart(from, width)) / width)
