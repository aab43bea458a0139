/** Request headers several codecs send alike. */

/** JSON, and the key as `Authorization: Bearer <key>` when there is one; a new object each call (the runner edits it). */
export const bearerJsonHeaders = (_target: unknown, apiKey: string | undefined): Record<string, string> => {
  const headers: Record<string, string> = { "content-type": "application/json" }
  if (apiKey !== undefined) headers.authorization = `Bearer ${apiKey}`
  return headers
}
