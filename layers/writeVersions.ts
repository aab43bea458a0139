/**
 * Versions of rows that a later write replaces (the evaluation runs and results of
 * layers/clickhouse/evaluations.ts and layers/postgres/evaluations.ts): the newest version is
 * the one read. Within this process each version is above every earlier one, even within one
 * millisecond or when the clock steps back, so the last write wins; across processes they
 * follow the clocks. A thousand versions per millisecond before borrowing from the next one:
 * epoch ms times 1000 stay safe integers (and fit UInt64 and bigint) until the year 2255.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"

let last = 0

/** the next version after every one this process gave, at the time `now` (epoch ms) */
const nextWriteVersion = (now: number): number => {
  last = Math.max(Math.floor(now) * 1000, last + 1)
  return last
}

/** `count` successive versions, at the time of the Clock */
export const writeVersions = (count: number): Effect.Effect<Array<number>> =>
  Effect.map(Clock.currentTimeMillis, (now) => Array.from({ length: count }, () => nextWriteVersion(now)))
