/**
 * The episode ids of workflow evaluation runs carry a mark, so that an inference can tell
 * without asking the database that its `episode_id` is certainly not a run episode: a UUIDv7
 * whose last 16 bits (the end of its random tail) are `runEpisodeMarker`. Only ids that carry
 * it are looked up; one in 65,536 ordinary ids carries it by chance, and costs a lookup that
 * finds nothing. The mark takes 16 of the 62 random bits; with the 12-bit counter of the same
 * millisecond, run episode ids still do not collide.
 */
import { uuidv7 } from "../ids.ts"

/** the last four hex digits of every run episode id: digits only, so upper- and lower-case ids match alike */
export const runEpisodeMarker = "7015"

const markerStart = 32
const m0 = runEpisodeMarker.charCodeAt(0)
const m1 = runEpisodeMarker.charCodeAt(1)
const m2 = runEpisodeMarker.charCodeAt(2)
const m3 = runEpisodeMarker.charCodeAt(3)

/** a new run episode id carrying the time `now` (epoch ms) and the mark */
export const mintRunEpisodeId = (now: number): string => uuidv7(now).slice(0, markerStart) + runEpisodeMarker

/**
 * Whether `id` may be a run episode id: it carries the mark. Runs on every inference that
 * names an episode, so it only compares characters (no allocation).
 */
export const mayBeRunEpisodeId = (id: string): boolean =>
  id.length === 36 &&
  id.charCodeAt(markerStart) === m0 &&
  id.charCodeAt(markerStart + 1) === m1 &&
  id.charCodeAt(markerStart + 2) === m2 &&
  id.charCodeAt(markerStart + 3) === m3
