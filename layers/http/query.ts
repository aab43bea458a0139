/** The query string of a route: its parameters, and integers in a range (a 400 naming the parameter otherwise). */
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import { InvalidRequest } from "../../src/errors.ts"

export const queryParams = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
  const at = request.url.indexOf("?")
  return new URLSearchParams(at < 0 ? "" : request.url.slice(at + 1))
})

/** the integer `name` of the query, `fallback` when absent, or the 400 saying what it must be */
export const integerParam = (query: URLSearchParams, name: string, fallback: number, min: number, max: number) => {
  const given = query.get(name)
  if (given === null) return Effect.succeed(fallback)
  const value = /^\d{1,15}$/.test(given) ? Number(given) : Number.NaN
  return value >= min && value <= max
    ? Effect.succeed(value)
    : Effect.fail(new InvalidRequest({ message: `${name}: "${given.slice(0, 100)}" is not an integer from ${min} to ${max}` }))
}

/** the boolean `name` of the query (`true` or `false`), `false` when absent, or the 400 saying what it must be */
export const booleanParam = (query: URLSearchParams, name: string) => {
  const given = query.get(name)
  if (given === null || given === "false") return Effect.succeed(false)
  if (given === "true") return Effect.succeed(true)
  return Effect.fail(new InvalidRequest({ message: `${name}: "${given.slice(0, 100)}" is not true or false` }))
}
