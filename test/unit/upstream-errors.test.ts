/**
 * Whose fault an upstream failure was, and the status the caller gets once every provider (and
 * variant) failed: the table of `failureKind`, `allFailed` and the variants' `aggregate`, and
 * how an upstream's Retry-After is read.
 */
import { describe, expect, it } from "vitest"
import { AllProvidersFailed, type AllVariantsFailed, RequestTimeout } from "../../src/errors.ts"
import { allFailed } from "../../src/inference/routing.ts"
import { aggregate } from "../../src/inference/variants/loop.ts"
import { parseRetryAfter } from "../../src/providers/retryAfter.ts"
import { ProviderFailure } from "../../src/providers/failure.ts"

const upstream = (status: number | undefined, retryAfterS?: number) =>
  new ProviderFailure({ message: status === undefined ? "request failed: ECONNREFUSED" : `HTTP ${status}: says so`, timedOut: false, status, retryAfterS })
const timedOut = new ProviderFailure({ message: "timed out after 100 ms", timedOut: true })

const statusOf = (...failures: ReadonlyArray<ProviderFailure>) =>
  allFailed("m", failures.map((failure, index) => ({ name: `p${index}`, failure, atMs: 0 })))

describe("the status once every provider failed", () => {
  const table: ReadonlyArray<readonly [string, ReadonlyArray<ProviderFailure>, number]> = [
    ["a context too long (400)", [upstream(400)], 400],
    ["400, 404, 413 and 422: all the request's fault", [upstream(400), upstream(404), upstream(413), upstream(422)], 400],
    ["a 429", [upstream(429)], 429],
    ["429s and the request's fault", [upstream(429), upstream(400)], 429],
    ["a 429 and a timeout", [upstream(429), timedOut], 429],
    ["refused credentials (401)", [upstream(401)], 502],
    ["refused credentials (403) and a 429", [upstream(403), upstream(429)], 502],
    ["a 503", [upstream(503)], 502],
    ["a 500 and a 400", [upstream(500), upstream(400)], 502],
    ["no answer (network)", [upstream(undefined)], 502],
    ["a timeout", [timedOut], 504],
    ["timeouts only", [timedOut, timedOut], 504],
    ["a timeout and a 400", [timedOut, upstream(400)], 504],
    ["a timeout and a 502", [timedOut, upstream(502)], 502]
  ]
  for (const [what, failures, status] of table) {
    it(`${what} -> ${status}`, () => expect(statusOf(...failures).status).toBe(status))
  }

  it("a 429 carries the largest Retry-After any provider sent, and keeps every provider's message", () => {
    const error = statusOf(upstream(429, 3), upstream(429), upstream(429, 7.5), upstream(400))
    expect(error.status).toBe(429)
    expect(error.retryAfterS).toBe(7.5)
    expect(error.message).toBe(
      `every provider of model "m" failed: provider "p0": HTTP 429: says so; provider "p1": HTTP 429: says so; provider "p2": HTTP 429: says so; provider "p3": HTTP 400: says so`
    )
  })

  it("a 502 carries no Retry-After, even when a 429 sent one", () => {
    expect(statusOf(upstream(429, 3), upstream(500)).retryAfterS).toBeUndefined()
  })

  it("is overloaded when every provider that failed on its side said so (529 or 503)", () => {
    expect(statusOf(upstream(529)).overloaded).toBe(true)
    expect(statusOf(upstream(529), upstream(503), upstream(400)).overloaded).toBe(true)
    expect(statusOf(upstream(529), upstream(500)).overloaded).toBeUndefined()
    expect(statusOf(upstream(529), timedOut).overloaded).toBeUndefined()
    expect(statusOf(upstream(529), upstream(429)).overloaded).toBeUndefined()
  })
})

describe("the status once every variant failed", () => {
  const variant = (name: string, failure: AllProvidersFailed | RequestTimeout) => ({ name, failure, atMs: 0 })

  it("adds up the variants' kinds as providers' are, with the largest Retry-After", () => {
    const both = aggregate([variant("a", statusOf(upstream(429, 2))), variant("b", statusOf(upstream(429, 9)))])
    expect(both.status).toBe(429)
    expect((both as AllProvidersFailed).retryAfterS).toBe(9)
    expect(aggregate([variant("a", statusOf(upstream(400))), variant("b", statusOf(upstream(422)))]).status).toBe(400)
    expect(aggregate([variant("a", statusOf(upstream(400))), variant("b", statusOf(upstream(503)))]).status).toBe(502)
    expect(aggregate([variant("a", statusOf(timedOut)), variant("b", new RequestTimeout({ message: "variant b timed out" }))]).status)
      .toBe(504)
  })

  it("is overloaded when every variant that failed upstream was", () => {
    const overloaded = (...failures: ReadonlyArray<AllProvidersFailed>) =>
      (aggregate(failures.map((failure, index) => variant(`v${index}`, failure))) as AllVariantsFailed).overloaded
    expect(overloaded(statusOf(upstream(529)), statusOf(upstream(503), upstream(400)))).toBe(true)
    expect(overloaded(statusOf(upstream(529)), statusOf(upstream(500)))).toBeUndefined()
  })

  it("passes one variant's error through: a variant's own timeout stays 408", () => {
    expect(aggregate([variant("a", new RequestTimeout({ message: "variant a timed out" }))]).status).toBe(408)
    expect(aggregate([variant("a", statusOf(upstream(401)))]).status).toBe(502)
  })
})

describe("Retry-After", () => {
  const now = Date.parse("2026-01-01T00:00:00Z")
  it("reads seconds, or an HTTP date (from now; past dates are 0)", () => {
    expect(parseRetryAfter("30", now)).toBe(30)
    expect(parseRetryAfter(" 1.5 ", now)).toBe(1.5)
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:20 GMT", now)).toBe(20)
    expect(parseRetryAfter("Wed, 31 Dec 2025 23:59:00 GMT", now)).toBe(0)
  })
  it("ignores what it cannot read", () => {
    for (const value of [undefined, "", "soon", "-5", "12abc"]) expect(parseRetryAfter(value, now)).toBeUndefined()
  })
})
