/**
 * The UI's one way to the gateway: its HttpApi routes, relative to where the page is served
 * (`<base_path>/ui/`, written into the page's <base> element by the gateway). Requests that change
 * something carry the session's CSRF token, and every request the workspace a global admin picked; a
 * 401 or 403 sends the user to the sign-in page.
 * Types come from the server's contract (src/api), so the UI cannot drift from it.
 */

import { pickedWorkspace, workspaceHeader } from "./workspace.ts"

/** `<base_path>` as the page was served under it: "" or "/prefix" */
export const basePath = new URL("..", document.baseURI).pathname.replace(/\/$/, "")

/** the router's basename */
export const uiBase = `${basePath}/ui`

const csrfCookie = "gateway_ui_csrf"
const csrfHeader = "x-gateway-csrf"

const cookie = (name: string): string | undefined =>
  document.cookie.split("; ").find((entry) => entry.startsWith(`${name}=`))?.slice(name.length + 1)

export class ApiError extends Error {
  constructor(readonly status: number, message: string) {
    super(message)
  }
}

/** listeners told when the gateway refuses the session (the app shows the sign-in page) */
const signedOut = new Set<() => void>()
export const onSignedOut = (listener: () => void) => {
  signedOut.add(listener)
  return () => void signedOut.delete(listener)
}

export interface RequestOptions {
  readonly method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  readonly body?: unknown
  /** a raw body (JSONL), sent as is */
  readonly text?: string
  readonly signal?: AbortSignal
}

/** The response of `path` (relative to the base path, starting with "/"), or an ApiError with the gateway's message. */
export const request = async (path: string, options: RequestOptions = {}): Promise<Response> => {
  const method = options.method ?? (options.body === undefined && options.text === undefined ? "GET" : "POST")
  const headers: Record<string, string> = {}
  if (method !== "GET") headers[csrfHeader] = cookie(csrfCookie) ?? ""
  if (options.body !== undefined) headers["content-type"] = "application/json"
  if (options.text !== undefined) headers["content-type"] = "application/x-ndjson"
  // a global admin's pick (./workspace.ts); a workspace admin never has one
  const workspace = pickedWorkspace()
  if (workspace !== undefined) headers[workspaceHeader] = workspace
  const response = await fetch(`${basePath}${path}`, {
    method,
    headers,
    body: options.body !== undefined ? JSON.stringify(options.body) : options.text,
    credentials: "same-origin",
    signal: options.signal
  })
  if (!response.ok) {
    const text = await response.text()
    let message = text
    try {
      const parsed = JSON.parse(text)
      message = typeof parsed.error === "string" ? parsed.error : typeof parsed.error?.message === "string" ? parsed.error.message : text
    } catch {
      // not JSON: the text itself
    }
    if ((response.status === 401 || response.status === 403) && !path.startsWith("/v1/ui/session")) {
      for (const listener of signedOut) listener()
    }
    throw new ApiError(response.status, message || `${response.status} ${response.statusText}`)
  }
  return response
}

/** `request`, parsed as JSON */
export const api = async <T>(path: string, options: RequestOptions = {}): Promise<T> => (await request(path, options)).json() as Promise<T>

/**
 * The events of a streamed answer (`text/event-stream`, `data: {...}` lines, ending with
 * `data: [DONE]`): each parsed event in turn.
 */
export async function* events(path: string, body: unknown, signal?: AbortSignal): AsyncGenerator<unknown> {
  const response = await request(path, { body, signal })
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  let buffered = ""
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return
    buffered += value
    let end: number
    while ((end = buffered.indexOf("\n\n")) >= 0) {
      const frame = buffered.slice(0, end)
      buffered = buffered.slice(end + 2)
      for (const line of frame.split("\n")) {
        if (!line.startsWith("data:")) continue
        const data = line.slice(5).trim()
        if (data === "[DONE]") return
        yield JSON.parse(data)
      }
    }
  }
}

/** a query string of the defined values */
export const query = (params: Record<string, string | number | boolean | undefined>): string => {
  const search = new URLSearchParams()
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== "") search.set(key, String(value))
  const text = search.toString()
  return text === "" ? "" : `?${text}`
}
