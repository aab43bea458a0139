/** Times as the API and the command line take them. */

const rfc3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-](\d{2}):(\d{2}))$/i

const daysInMonth = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate()

/**
 * Epoch milliseconds of an RFC 3339 date-time with its offset (`2026-01-31T12:00:00Z`,
 * `2026-01-31T13:00:00.5+01:00`); undefined for anything else, including dates that do not
 * exist (`2026-02-30`), which `Date.parse` alone would roll over into the next month.
 */
export const parseRfc3339 = (text: string): number | undefined => {
  const match = rfc3339.exec(text)
  if (match === null) return undefined
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number)
  const [offsetHour, offsetMinute] = [match[9], match[10]].map((part) => Number(part ?? 0))
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined
  if (hour > 23 || minute > 59 || second > 59 || offsetHour > 23 || offsetMinute > 59) return undefined
  const time = Date.parse(text)
  return Number.isNaN(time) ? undefined : time
}
