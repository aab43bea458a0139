/**
 * Failed authentications per client address (`[gateway.auth] max_failed_attempts_per_minute`):
 * a token bucket per address holding that many attempts, refilling continuously. Keys guessed
 * at random would otherwise each cost a database query; past the limit the address is refused
 * before the database is asked. Counted in the memory of one process; the addresses tracked are
 * bounded (the one touched longest ago is forgotten first), and an address whose bucket is full
 * again is forgotten, as it holds no information.
 */

interface Bucket {
  tokens: number
  /** when `tokens` was computed (ms) */
  at: number
}

/** the addresses tracked at most: a few hundred kilobytes */
const defaultMaxAddresses = 10_000

export class FailedAttempts {
  private readonly buckets = new Map<string, Bucket>()
  readonly perMinute: number
  private readonly perMs: number
  private readonly maxAddresses: number

  constructor(perMinute: number, maxAddresses = defaultMaxAddresses) {
    this.perMinute = perMinute
    this.perMs = perMinute / 60_000
    this.maxAddresses = maxAddresses
  }

  /** the attempts `address` has left at `now` (ms) */
  private level(bucket: Bucket | undefined, now: number): number {
    if (bucket === undefined) return this.perMinute
    return Math.min(this.perMinute, bucket.tokens + Math.max(0, now - bucket.at) * this.perMs)
  }

  private store(address: string, tokens: number, now: number): void {
    // a check that began before another one ended must not move the clock back
    const at = Math.max(now, this.buckets.get(address)?.at ?? now)
    // re-inserted, so that the map's order is the order of last use
    this.buckets.delete(address)
    if (tokens >= this.perMinute) return
    if (this.buckets.size >= this.maxAddresses) this.buckets.delete(this.buckets.keys().next().value as string)
    this.buckets.set(address, { tokens, at })
  }

  /** Takes one attempt from `address`: false (and nothing taken) when it has none left. */
  take(address: string, now: number): boolean {
    const bucket = this.buckets.get(address)
    const level = this.level(bucket, now)
    if (level < 1) {
      // still the newest: the address knocking hardest is the last forgotten
      this.buckets.delete(address)
      this.buckets.set(address, bucket!)
      return false
    }
    this.store(address, level - 1, now)
    return true
  }

  /** Gives back an attempt taken ahead of a check that succeeded. */
  giveBack(address: string, now: number): void {
    const bucket = this.buckets.get(address)
    if (bucket !== undefined) this.store(address, this.level(bucket, now) + 1, now)
  }

  /** whole seconds until `address` has an attempt again (at least 1) */
  retryAfterS(address: string, now: number): number {
    const level = this.level(this.buckets.get(address), now)
    return Math.max(1, Math.ceil((1 - level) / this.perMs / 1000))
  }

  /** how many addresses are tracked */
  get size(): number {
    return this.buckets.size
  }
}
