/** Whether a name and value can be sent as an HTTP header: the check of every header a request or the configuration asks the gateway to send. */

const httpToken = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/** What the HTTP client (undici's `isValidHeaderValue`) refuses in a header value: all but tab, printable ASCII and Latin-1. */
const unsendable = /[^\t\x20-\x7e\x80-\xff]/

/** Why `name: value` cannot be sent as an HTTP header, or undefined when it can. */
export const headerProblem = (name: string, value: string): string | undefined =>
  !httpToken.test(name) ? `"${name}" is not a valid HTTP header name` : headerValueProblem(name, value)

/**
 * The character of `value` that a header cannot carry (a line break or a NUL, which would forge
 * headers; a control or non-Latin-1 character, which the HTTP client refuses), named by its
 * code point and never written out; undefined when there is none.
 */
export const unsendableCharacter = (value: string): string | undefined => {
  const found = unsendable.exec(value)
  if (found === null) return undefined
  if (/[\r\n\0]/.test(value)) return "a line break or a NUL"
  const codePoint = value.codePointAt(found.index)!.toString(16).toUpperCase().padStart(4, "0")
  return `the character U+${codePoint} (at index ${found.index})`
}

/** Why `value` cannot be sent as the value of header `name`, or undefined. */
export const headerValueProblem = (name: string, value: string): string | undefined => {
  const character = unsendableCharacter(value)
  if (character === undefined) return undefined
  return `the value of "${name}" holds ${character}, which HTTP headers cannot carry${
    character.startsWith("the character") ? ": only tab, printable ASCII and Latin-1 characters" : ""
  }`
}
