/**
 * Provider error messages echo what they were sent (`Incorrect API key provided: Bearer sk-...`):
 * before one reaches the client, the log, the stored records or a trace, the credential of the
 * call comes out of it.
 */

export const redacted = "[REDACTED]"

// a key shorter than this is replaced only as part of the patterns below: replacing every
// occurrence of a two-letter key would garble the message and protect nothing
const minExactKeyLength = 4

/**
 * Whatever the key of the call: `Bearer <token>` (8 or more token68 characters, one at least
 * not a letter, so that prose such as "a bearer token is required" stays; a dot ending a
 * sentence is not part of it) and OpenAI-style `sk-...` keys.
 */
const secretPatterns =
  /\b(Bearer\s+)(?=[A-Za-z]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{7,}[A-Za-z0-9_~+/=-]|\bsk-[A-Za-z0-9_-]{8,}/gi

/** `text` without the call's API key, nor anything that looks like a bearer token or an `sk-` key. */
export const redactSecrets = (text: string, apiKey: string | undefined): string => {
  let clean = apiKey !== undefined && apiKey.length >= minExactKeyLength ? text.replaceAll(apiKey, redacted) : text
  clean = clean.replace(secretPatterns, (_match, bearer: string | undefined) => bearer === undefined ? redacted : `${bearer}${redacted}`)
  return clean
}
