/**
 * The headers of the HTML pages the gateway serves on its own origin (the UI, `/docs`), where the
 * UI's session cookie is sent: a Content-Security-Policy saying what each page may run and
 * reach, never framed (no clickjacking), no type sniffing, no full URL sent to other origins.
 */
import { createHash } from "node:crypto"

export const pageHeaders = (contentSecurityPolicy: string): Readonly<Record<string, string>> => ({
  "content-security-policy": contentSecurityPolicy,
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "x-frame-options": "DENY"
})

/**
 * The CSP sources allowing exactly the inline `<script>` elements of `html` (their SHA-256
 * hashes, as `script-src` takes them): the page's own scripts run, anything injected does not.
 */
export const inlineScriptHashes = (html: string): ReadonlyArray<string> =>
  [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(([, source]) => `'sha256-${createHash("sha256").update(source, "utf8").digest("base64")}'`)
