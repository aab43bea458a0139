/**
 * `GET /v1/audit` (src/api/audit.ts): the audit log's entries the caller may read — its
 * workspace's, or every workspace's for a global admin — as one JSON page, or every matching
 * entry as JSON Lines (`format=jsonl`), read a page at a time while the answer streams.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { auditPageLimit, type AuditEntryJson } from "../../src/api/audit.ts"
import { jsonLinesContentType } from "../../src/api/datasets.ts"
import { AuditLog } from "../../src/audit/service.ts"
import type { AuditEntry, AuditQuery } from "../../src/audit/store.ts"
import { InvalidRequest } from "../../src/errors.ts"
import { isUuid } from "../../src/ids.ts"
import { parseRfc3339 } from "../../src/time.ts"
import { type Caller, checkWorkspaceName } from "../../src/workspace.ts"
import { integerParam, queryParams } from "./query.ts"
import { jsonResponse } from "./respond.ts"

const textEncoder = new TextEncoder()

export const auditEntryJson = (entry: AuditEntry): AuditEntryJson => ({
  id: entry.id,
  time: new Date(entry.at).toISOString(),
  workspace: entry.workspace,
  actor_kind: entry.actorKind,
  actor: entry.actor ?? null,
  action: entry.action,
  target: entry.target ?? null,
  outcome: entry.outcome,
  status: entry.status ?? null,
  address: entry.address ?? null,
  details: entry.details ?? {}
})

const invalid = (message: string) => Effect.fail(new InvalidRequest({ message }))

/** a time parameter, or the 400 naming it */
const timeParam = (query: URLSearchParams, name: string): Effect.Effect<number | undefined, InvalidRequest> => {
  const given = query.get(name)
  if (given === null) return Effect.succeed(undefined)
  const time = parseRfc3339(given)
  return time === undefined ? invalid(`${name}: expected an RFC 3339 time such as 2026-12-31T23:59:59Z, got "${given.slice(0, 100)}"`) : Effect.succeed(time)
}

/** the entries `caller` asks for and may read: its workspace's, or (a global admin) every one's or the one it names */
const auditQuery = (caller: Caller, query: URLSearchParams) =>
  Effect.gen(function*() {
    const named = query.get("workspace") ?? undefined
    if (named !== undefined) yield* Effect.fromResult(checkWorkspaceName(named))
    if (caller.role !== "global" && named !== undefined && named !== caller.workspace) {
      return yield* invalid(`workspace: only a global admin reads another workspace's entries; this key's is "${caller.workspace}"`)
    }
    const before = query.get("before") ?? undefined
    if (before !== undefined && !isUuid(before)) return yield* invalid(`before: "${before.slice(0, 100)}" is not an entry id (a UUID)`)
    const format = query.get("format") ?? "json"
    if (format !== "json" && format !== "jsonl") return yield* invalid(`format: "${format.slice(0, 100)}" is neither json nor jsonl`)
    const filters: AuditQuery = {
      // a workspace admin reads its own workspace (naming another was refused above)
      workspace: caller.role === "global" ? named : caller.workspace,
      actor: query.get("actor") ?? undefined,
      action: query.get("action") ?? undefined,
      since: yield* timeParam(query, "since"),
      until: yield* timeParam(query, "until"),
      before,
      limit: yield* integerParam(query, "limit", auditPageLimit.default, 1, auditPageLimit.max)
    }
    return { filters, format }
  })

export const listAuditHandler = (caller: Caller) =>
  Effect.gen(function*() {
    const query = yield* queryParams
    const { filters, format } = yield* auditQuery(caller, query)
    const audit = yield* AuditLog
    const first = yield* audit.list(filters)
    if (format === "json") {
      const next = first.length === filters.limit ? first[first.length - 1].id : null
      return jsonResponse(JSON.stringify({ entries: first.map(auditEntryJson), next }))
    }
    // every matching entry: the first page read before the answer starts (a database down is a 503, not a 200 cut short)
    const lines = (entries: ReadonlyArray<AuditEntry>) => entries.map((entry) => JSON.stringify(auditEntryJson(entry)) + "\n").join("")
    const nextCursor = (page: ReadonlyArray<AuditEntry>) =>
      page.length === filters.limit ? Option.some(page[page.length - 1].id) : Option.none<string>()
    const after = nextCursor(first)
    const rest = Option.isNone(after) ? Stream.empty : Stream.paginate(after.value, (cursor: string) =>
      Effect.map(audit.list({ ...filters, before: cursor }), (page) => [[lines(page)], nextCursor(page)] as const))
    const body = Stream.concat(Stream.make(lines(first)), rest).pipe(
      Stream.filter((text) => text !== ""),
      Stream.map((text) => textEncoder.encode(text))
    )
    return HttpServerResponse.stream(body, { contentType: jsonLinesContentType, headers: { "content-disposition": `attachment; filename="audit.jsonl"` } })
  })
