/**
 * What `search_query` and the `search_relevance` order look at: a datapoint's text (the words
 * of its input and output, not the JSON around them, so that `user` or `text` match only where
 * someone wrote them), lower-cased once when the version is written; and a query cut into the
 * lower-cased terms the store looks for as substrings.
 */

/** the search text kept per version, at most this long: enough to rank by, without doubling large rows */
export const maxSearchTextChars = 65_536
/** a query's terms, at most this many, each at most this long */
export const searchQueryLimits = { terms: 16, termChars: 200 } as const

/** every string and number in `value` (object keys left out), in order */
const collect = (value: unknown, into: Array<string>, budget: { left: number }): void => {
  if (budget.left <= 0) return
  if (typeof value === "string") {
    into.push(value)
    budget.left -= value.length + 1
  } else if (typeof value === "number" || typeof value === "boolean") {
    into.push(String(value))
  } else if (Array.isArray(value)) {
    for (const item of value) collect(item, into, budget)
  } else if (typeof value === "object" && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      // the structure of blocks (their type, ids, file data) is not text anyone searches for
      if (key === "type" || key === "id" || key === "data" || key === "file_type" || key === "mime_type" || key === "detail" || key === "signature") continue
      collect(item, into, budget)
    }
  }
}

/** the text of a datapoint's `input` and `output`, lower-cased and bounded */
export const searchTextOf = (input: unknown, output: unknown): string => {
  const parts: Array<string> = []
  const budget = { left: maxSearchTextChars }
  collect(input, parts, budget)
  collect(output, parts, budget)
  return parts.join("\n").slice(0, maxSearchTextChars).toLowerCase()
}

/** the distinct lower-cased words of a query, or the problem with it */
export const searchTerms = (query: string, path: string): ReadonlyArray<string> | { readonly problem: string } => {
  const terms = [...new Set(query.toLowerCase().split(/\s+/).filter((term) => term !== ""))]
  if (terms.length === 0) return { problem: `${path}: holds no word to search for` }
  if (terms.length > searchQueryLimits.terms) return { problem: `${path}: holds more than ${searchQueryLimits.terms} words` }
  const long = terms.find((term) => term.length > searchQueryLimits.termChars)
  if (long !== undefined) return { problem: `${path}: a word is longer than ${searchQueryLimits.termChars} characters` }
  if (terms.some((term) => term.includes("\0"))) return { problem: `${path}: holds a NUL character (\\u0000)` }
  return terms
}
