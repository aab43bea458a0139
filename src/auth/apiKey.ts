/**
 * API keys (spec 2.9, 5): `sk-gw-<public_id>-<secret>`. The public id (12 characters) names
 * the key; the secret (48 random alphanumerics, about 285 bits) is never stored, only its
 * SHA-256: with that much entropy a slow password hash adds nothing, and verification stays
 * cheap enough for every request. Comparison is in constant time.
 *
 * Keys imported from TensorZero (issue 40) keep their text, `sk-t0-<public_id>-<secret>`, whose
 * public id mixes cases (and is compared case-sensitively) and whose secret TensorZero hashed the
 * same way. A key says who issued it by its prefix; new keys are always this gateway's.
 */
import { createHash, randomInt, timingSafeEqual } from "node:crypto"

export const apiKeyPrefix = "sk-gw-"
export const tensorZeroKeyPrefix = "sk-t0-"
export const publicIdLength = 12
const secretLength = 48

/** who issued a key: this gateway, or TensorZero (imported with `gateway import-tensorzero`) */
export type ApiKeyIssuer = "gateway" | "tensorzero"

const publicIdAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
const secretAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

const secretPart = `([A-Za-z0-9]{${secretLength}})`
const gatewayKeyPattern = new RegExp(`^${apiKeyPrefix}([a-z0-9]{${publicIdLength}})-${secretPart}$`)
const tensorZeroKeyPattern = new RegExp(`^${tensorZeroKeyPrefix}([A-Za-z0-9]{${publicIdLength}})-${secretPart}$`)
/**
 * A public id as a user names a key (in rules, spend reads, disabling): this gateway's are
 * lowercase, TensorZero's mixed-case; either way 12 letters and digits, case-sensitive.
 */
export const publicIdPattern = new RegExp(`^[A-Za-z0-9]{${publicIdLength}}$`)

/** characters drawn uniformly from `alphabet` with the CSPRNG */
const randomString = (alphabet: string, length: number): string => {
  let out = ""
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)]
  return out
}

export interface ParsedApiKey {
  /** whose format the key has, by its prefix: it lets a key in only when its stored issuer is the same */
  readonly issuer: ApiKeyIssuer
  readonly publicId: string
  readonly secret: string
}

export const parseApiKey = (text: string): ParsedApiKey | undefined => {
  const gateway = gatewayKeyPattern.exec(text)
  if (gateway !== null) return { issuer: "gateway", publicId: gateway[1], secret: gateway[2] }
  const tensorZero = tensorZeroKeyPattern.exec(text)
  return tensorZero === null ? undefined : { issuer: "tensorzero", publicId: tensorZero[1], secret: tensorZero[2] }
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
