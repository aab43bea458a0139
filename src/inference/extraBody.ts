/**
 * `extra_body` and `extra_headers` (spec 4.1.1, 4.1.2): edits applied to the provider request
 * after it is built. Entries come from the provider's configuration, then the variant's,
 * then the request's (scoped to a variant, a model, or a model's provider), later ones winning.
 */
import * as Schema from "effect/Schema"
import { headerProblem, headerValueProblem } from "../httpHeaders.ts"
import { quoted } from "../untrusted.ts"

export const ExtraBodyEdit = Schema.Union([
  Schema.Struct({ pointer: Schema.String, value: Schema.Unknown }),
  Schema.Struct({ pointer: Schema.String, delete: Schema.Literal(true) })
])
export type ExtraBodyEdit = typeof ExtraBodyEdit.Type

export const ExtraHeaderEdit = Schema.Union([
  Schema.Struct({ name: Schema.String, value: Schema.String }),
  Schema.Struct({ name: Schema.String, delete: Schema.Literal(true) })
])
export type ExtraHeaderEdit = typeof ExtraHeaderEdit.Type

/**
 * Headers no edit may set or remove: the HTTP client writes them itself (`host`, the framing of
 * the body), they concern one connection only (hop-by-hop, RFC 9110 section 7.6.1), or the
 * client refuses them (`expect`). Sent anyway, the call fails in the client, not at the provider.
 */
const reservedHeaders = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "upgrade",
  "expect"
])

/** a header the gateway's HTTP client sets itself (`content-length`, `host`, ...): an `extra_headers` entry cannot set or remove it */
export const isManagedHeader = (name: string): boolean => reservedHeaders.has(name.toLowerCase())

/**
 * Why an `extra_headers` entry cannot be sent, naming its field (`name` or `value`), or undefined.
 * The one check for request and configured entries alike.
 */
export const extraHeaderProblem = (
  name: string,
  value: string | undefined
): { readonly field: "name" | "value"; readonly message: string } | undefined => {
  if (headerProblem(name, "") !== undefined) return { field: "name", message: `${quoted(name)} is not a valid HTTP header name` }
  if (reservedHeaders.has(name.toLowerCase())) {
    return { field: "name", message: `"${name}" is managed by the gateway's HTTP client: it cannot be set or removed` }
  }
  const unsendable = value === undefined ? undefined : headerValueProblem(name, value)
  return unsendable === undefined ? undefined : { field: "value", message: unsendable }
}

/** Which model calls a request-level edit applies to; no scope means every call. */
export interface EditScope {
  readonly variant_name?: string | undefined
  readonly model_name?: string | undefined
  readonly provider_name?: string | undefined
  /**
   * the family of API the provider speaks (src/providers/families.ts): set only by a surface
   * passing on its own fields (Anthropic's `metadata`, say), never by a request's entry
   */
  readonly provider_family?: string | undefined
}

/** The model call an edit is being considered for. */
export interface CallTarget {
  readonly variantName: string
  readonly modelName: string
  readonly providerName: string
  readonly providerFamily: string
}

export const scopeMatches = (scope: EditScope, target: CallTarget): boolean => {
  if (scope.variant_name !== undefined && scope.variant_name !== target.variantName) return false
  if (scope.model_name !== undefined && scope.model_name !== target.modelName) return false
  if (scope.provider_name !== undefined && scope.provider_name !== target.providerName) return false
  if (scope.provider_family !== undefined && scope.provider_family !== target.providerFamily) return false
  return true
}

/** RFC 6901: `/a/b~1c` -> ["a", "b/c"]. Fails on a pointer that does not start with `/`. */
export const parsePointer = (pointer: string): ReadonlyArray<string> | undefined => {
  if (pointer === "") return []
  if (!pointer.startsWith("/")) return undefined
  return pointer.slice(1).split("/").map((token) => token.replaceAll("~1", "/").replaceAll("~0", "~"))
}

const isContainer = (value: unknown): value is Record<string, unknown> | Array<unknown> =>
  typeof value === "object" && value !== null

/**
 * Where a request's own edit came from: its field (`extra_body[2]`) and the entry as the request
 * wrote it (scope included, for the dummy's `echo_extra_info`). On request edits only, as a
 * hidden property (not enumerable, left out of JSON), so edits compare and hash (cache keys) as before.
 */
const requestOrigin: unique symbol = Symbol("extra_body and extra_headers request origin")

interface RequestOrigin {
  readonly field: string
  readonly entry: unknown
}

type RequestEdit = { readonly [requestOrigin]?: RequestOrigin }

const fromRequest = <E extends object>(edit: E, field: string, entry: unknown): E =>
  Object.defineProperty(edit, requestOrigin, { value: { field, entry } satisfies RequestOrigin })

/**
 * An edit of the request's `extra_body`, at `field`, written as `entry` (by default the edit
 * itself): if it cannot be applied, the inference ends with a 400.
 */
export const requestBodyEdit = (edit: ExtraBodyEdit, field: string, entry: unknown = edit): ExtraBodyEdit => fromRequest(edit, field, entry)

/** An edit of the request's `extra_headers`, at `field`, written as `entry` (by default the edit itself). */
export const requestHeaderEdit = (edit: ExtraHeaderEdit, field: string, entry: unknown = edit): ExtraHeaderEdit =>
  fromRequest(edit, field, entry)

/**
 * The request field an edit came from (`extra_body[2]`), or undefined for a configured edit.
 * A configured edit that cannot be applied is a failure of that provider (the next one may take
 * it); a request's own is the caller's mistake, and ends the inference.
 */
export const requestFieldOf = (edit: ExtraBodyEdit): string | undefined => (edit as ExtraBodyEdit & RequestEdit)[requestOrigin]?.field

/** The request's entry an edit came from, as written, or undefined for a configured edit. */
export const requestEntryOf = (edit: object): unknown => (edit as object & RequestEdit)[requestOrigin]?.entry

/** An edit with the calls it applies to (a request's own `extra_body` and `extra_headers` entries). */
export interface ScopedEdit<E> {
  readonly scope: EditScope
  readonly edit: E
}

/**
 * A surface's own field, at `path` from the body's root, set to `value` in the bodies of the
 * calls to one provider family (src/providers/families.ts) only; a body it cannot be applied to
 * is a 400 naming `field`.
 */
export const familyBodyEdit = (family: string, path: ReadonlyArray<string>, value: unknown, field: string): ScopedEdit<ExtraBodyEdit> => ({
  scope: { provider_family: family },
  edit: requestBodyEdit({ pointer: path.map((token) => `/${token.replaceAll("~", "~0").replaceAll("/", "~1")}`).join(""), value }, field)
})

/**
 * Applies one edit to `body` in place. Missing intermediate objects are created; a final `-`
 * appends to an array. Returns an explanation when the pointer cannot be followed.
 * The objects and arrays along the pointer are copied before they change: below its top
 * level a provider body shares values with the configuration (stop sequences, tool schemas,
 * the output schema), which must stay as they are for the next request.
 */
export const applyExtraBodyEdit = (body: Record<string, unknown>, edit: ExtraBodyEdit): string | undefined => {
  const tokens = parsePointer(edit.pointer)
  if (tokens === undefined) return `extra_body pointer "${edit.pointer}" must start with "/"`
  if (tokens.length === 0) return `extra_body pointer "${edit.pointer}" must name a field`
  let node: unknown = body
  for (let i = 0; i < tokens.length - 1; i++) {
    const token = tokens[i]
    const container = node as Record<string, unknown> | Array<unknown>
    let next: unknown = Array.isArray(container) ? container[Number(token)] : container[token]
    if (next === undefined) {
      if ("delete" in edit) return undefined
      next = {}
    } else if (isContainer(next)) {
      next = Array.isArray(next) ? [...next] : { ...next }
    } else {
      return `extra_body pointer "${edit.pointer}" goes through a value that is not an object or array`
    }
    if (Array.isArray(container)) {
      const index = arrayIndex(container, token, false)
      if (index === undefined) return `extra_body pointer "${edit.pointer}": no index "${token}" in array`
      container[index] = next
    } else container[token] = next
    node = next
  }
  const last = tokens[tokens.length - 1]
  const parent = node as Record<string, unknown> | Array<unknown>
  if (Array.isArray(parent)) {
    const index = arrayIndex(parent, last, !("delete" in edit))
    if (index === undefined) return `extra_body pointer "${edit.pointer}": no index "${last}" in array`
    if ("delete" in edit) {
      if (index < parent.length) parent.splice(index, 1)
    } else if (index === parent.length) parent.push(edit.value)
    else parent[index] = edit.value
  } else if ("delete" in edit) {
    delete parent[last]
  } else {
    parent[last] = edit.value
  }
  return undefined
}

const arrayIndex = (array: ReadonlyArray<unknown>, token: string, allowAppend: boolean): number | undefined => {
  if (token === "-") return allowAppend ? array.length : undefined
  if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined
  const index = Number(token)
  return index <= array.length ? index : undefined
}

/** Applies header edits in order to a plain header record (names compared case-insensitively). */
export const applyExtraHeaderEdits = (
  headers: Record<string, string>,
  edits: ReadonlyArray<ExtraHeaderEdit>
): Record<string, string> => {
  for (const edit of edits) {
    const lower = edit.name.toLowerCase()
    for (const existing of Object.keys(headers)) {
      if (existing.toLowerCase() === lower) delete headers[existing]
    }
    if ("value" in edit) headers[edit.name] = edit.value
  }
  return headers
}
