/**
 * Authentication (spec 5): `Authorization: Bearer sk-gw-<public_id>-<secret>` on every
 * endpoint but /status and /health, when `[gateway.auth] enabled = true`. Each way a request
 * can fail has its own message; none repeats the secret.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { ServiceUnavailable, Unauthorized } from "../errors.ts"
import type { StoreError } from "../observability/store.ts"
import { parseApiKey, secretMatches } from "./apiKey.ts"
import type { StoredApiKey } from "./store.ts"

export class Authentication extends Context.Service<Authentication, {
  readonly enabled: boolean
  /** the public id of the request's valid key */
  readonly authenticate: (authorization: string | undefined) => Effect.Effect<string, Unauthorized | ServiceUnavailable>
}>()("gateway/Authentication") {}

const unauthorized = (message: string) => new Unauthorized({ message })

/**
 * Checks an Authorization header against the key it names, found by `find` (which may
 * answer from a short-lived cache).
 */
export const checkAuthorization = (
  authorization: string | undefined,
  find: (publicId: string) => Effect.Effect<StoredApiKey | undefined, StoreError>,
  now: number
): Effect.Effect<string, Unauthorized | ServiceUnavailable> => {
  if (authorization === undefined || authorization.trim() === "") {
    return Effect.fail(unauthorized(`missing API key: send the header "Authorization: Bearer <API key>"`))
  }
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization)
  if (match === null) return Effect.fail(unauthorized(`the Authorization header must be "Bearer <API key>"`))
  const parsed = parseApiKey(match[1])
  if (parsed === undefined) return Effect.fail(unauthorized("malformed API key: expected sk-gw-<12-character public id>-<secret>"))
  return find(parsed.publicId).pipe(
    Effect.mapError((error) =>
      new ServiceUnavailable({ message: `cannot check the API key: the relational database is unavailable: ${error.message}` })
    ),
    Effect.flatMap((key) => {
      // an unknown id and a wrong secret look the same from outside
      if (key === undefined || !secretMatches(parsed.secret, key.secretHash)) return Effect.fail(unauthorized("unknown API key"))
      if (key.disabledAt !== undefined) return Effect.fail(unauthorized(`API key ${key.publicId} is disabled`))
      if (key.expiresAt !== undefined && key.expiresAt <= now) {
        return Effect.fail(unauthorized(`API key ${key.publicId} expired at ${new Date(key.expiresAt).toISOString()}`))
      }
      return Effect.succeed(key.publicId)
    })
  )
}
