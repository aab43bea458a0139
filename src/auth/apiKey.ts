/**
 * API keys (spec 2.9, 5): `sk-gw-<public_id>-<secret>`. The public id (12 characters) names
 * the key; the secret (48 random alphanumerics, about 285 bits) is never stored, only its
 * SHA-256: with that much entropy a slow password hash adds nothing, and verification stays
 * cheap enough for every request. Comparison is in constant time.
 */
import { createHash, randomInt, timingSafeEqual } from "node:crypto"

export const apiKeyPrefix = "sk-gw-"
export const publicIdLength = 12
const secretLength = 48

const publicIdAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
const secretAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

const keyPattern = new RegExp(`^${apiKeyPrefix}([a-z0-9]{${publicIdLength}})-([A-Za-z0-9]{${secretLength}})$`)
export const publicIdPattern = new RegExp(`^[a-z0-9]{${publicIdLength}}$`)

/** characters drawn uniformly from `alphabet` with the CSPRNG */
const randomString = (alphabet: string, length: number): string => {
  let out = ""
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)]
  return out
}

export interface ParsedApiKey {
  readonly publicId: string
  readonly secret: string
}

export const parseApiKey = (text: string): ParsedApiKey | undefined => {
  const match = keyPattern.exec(text)
  return match === null ? undefined : { publicId: match[1], secret: match[2] }
}

export const hashSecret = (secret: string): Uint8Array => createHash("sha256").update(secret, "utf8").digest()

export const secretMatches = (secret: string, hash: Uint8Array): boolean => {
  const candidate = hashSecret(secret)
  return candidate.length === hash.length && timingSafeEqual(candidate, hash)
}

export interface NewApiKey {
  /** the whole key, shown once to its owner */
  readonly key: string
  readonly publicId: string
  readonly secretHash: Uint8Array
}

export const generateApiKey = (): NewApiKey => {
  const publicId = randomString(publicIdAlphabet, publicIdLength)
  const secret = randomString(secretAlphabet, secretLength)
  return { key: `${apiKeyPrefix}${publicId}-${secret}`, publicId, secretHash: hashSecret(secret) }
}
