/**
 * An upstream's `Retry-After` header (RFC 9110 §10.2.3): a number of seconds, or an HTTP date.
 * Read into seconds from `nowMs`; a date in the past is 0, anything unreadable is no value.
 */
const delaySeconds = /^\s*(\d+(?:\.\d+)?)\s*$/

export const parseRetryAfter = (value: string | undefined, nowMs: number): number | undefined => {
  if (value === undefined) return undefined
  const seconds = delaySeconds.exec(value)
  if (seconds !== null) return Number(seconds[1])
  // an IMF-fixdate ("Wed, 21 Oct 2015 07:28:00 GMT") or the obsolete forms Date.parse reads
  if (!/[a-z]/i.test(value)) return undefined
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, (at - nowMs) / 1000)
}
