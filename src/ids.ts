/**
 * UUIDv7 ids (inferences, episodes, model calls, feedback): a 48-bit millisecond timestamp,
 * then a 12-bit counter that keeps ids minted in the same millisecond in order, then random
 * bits. The caller gives the time (from Effect's `Clock`, or the clock injected into the
 * engine), so ids follow the clock the rest of the gateway reads. The random bits come from
 * the operating system's CSPRNG rather than Effect's `Random` (a seeded generator, not meant
 * for ids that must not collide across processes), drawn from a pooled buffer: three ids per
 * inference would otherwise cost three calls into the CSPRNG on the hot path. Trace and span
 * ids draw from it too.
 */
import { randomFillSync } from "node:crypto"

const pool = new Uint8Array(4096)
let offset = pool.length
const hex = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"))

let lastMs = -1
let counter = 0

const randomBytes = (count: number): number => {
  if (offset + count > pool.length) {
    randomFillSync(pool)
    offset = 0
  }
  const start = offset
  offset += count
  return start
}

/** a new id carrying the time `now` (epoch ms), or the last id's if the clock stepped back */
export const uuidv7 = (now: number): string => {
  let ms = Math.floor(now)
  const r = randomBytes(10)
  if (ms > lastMs) {
    lastMs = ms
    // start each millisecond at a random point in the lower half, leaving room to count up
    counter = ((pool[r] & 0x07) << 8) | pool[r + 1]
  } else {
    ms = lastMs
    counter++
    if (counter > 0xfff) {
      // more than 2048 ids in one millisecond: borrow the next one
      lastMs = ++ms
      counter = 0
    }
  }
  const high = Math.floor(ms / 0x1000000)
  const low = ms % 0x1000000
  return hex[(high >>> 16) & 0xff] + hex[(high >>> 8) & 0xff] + hex[high & 0xff] + hex[(low >>> 16) & 0xff] + "-" +
    hex[(low >>> 8) & 0xff] + hex[low & 0xff] + "-" +
    hex[0x70 | (counter >>> 8)] + hex[counter & 0xff] + "-" +
    hex[0x80 | (pool[r + 2] & 0x3f)] + hex[pool[r + 3]] + "-" +
    hex[pool[r + 4]] + hex[pool[r + 5]] + hex[pool[r + 6]] + hex[pool[r + 7]] + hex[pool[r + 8]] + hex[pool[r + 9]]
}

/** The millisecond timestamp a UUIDv7 carries. */
export const uuidv7Timestamp = (id: string): number => parseInt(id.slice(0, 8) + id.slice(9, 13), 16)

/** `count` random bytes as hex (trace and span ids), from the same pool */
export const randomHex = (count: number): string => {
  const r = randomBytes(count)
  let text = ""
  for (let i = 0; i < count; i++) text += hex[pool[r + i]]
  return text
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** A UUID of any version, as a database column of type UUID takes it. */
export const isUuid = (value: string): boolean => uuidPattern.test(value)

/** the distinct UUIDs among `ids`, lower-cased (as databases give them back); the others left out */
export const distinctUuids = (ids: ReadonlyArray<string>): Array<string> => [...new Set(ids.filter(isUuid).map((id) => id.toLowerCase()))]
