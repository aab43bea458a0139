/**
 * `GET /v1/audit`: the audit log's entries (src/audit/), newest first, for admins: a workspace
 * admin reads its workspace's, a global admin every workspace's (or one, with `workspace`).
 * Filters on the actor, the action and a time range; pages of `limit` entries, the next one
 * after `next`; `format=jsonl` exports every matching entry as JSON Lines.
 */
import * as Schema from "effect/Schema"

export const auditPageLimit = { default: 100, max: 1000 } as const

export const AuditEntryJson = Schema.Struct({
  id: Schema.String.annotate({ description: "UUIDv7: entries sort by it, newest first" }),
  time: Schema.String.annotate({ description: "when the act ended, RFC 3339 UTC", format: "date-time" }),
  workspace: Schema.String.annotate({ description: "the workspace acted on" }),
  actor_kind: Schema.Literals(["api_key", "ui_session", "oidc", "cli", "open"]).annotate({
    description: "an API key, the UI's session of one, the UI's session of a single sign-on identity, the command line, or anyone (authentication off)"
  }),
  actor: Schema.NullOr(Schema.String).annotate({ description: "the key's public id, the single sign-on identity's email (else its subject), or the command line's OS user" }),
  action: Schema.String.annotate({ description: "e.g. api_key.create, api_key.disable, config.reload, dataset.delete, ui.sign_in" }),
  target: Schema.NullOr(Schema.String).annotate({ description: "what it was done to: a key's public id, a dataset's name, a task's id" }),
  outcome: Schema.Literals(["success", "failure"]),
  status: Schema.NullOr(Schema.Number).annotate({ description: "the HTTP status answered" }),
  address: Schema.NullOr(Schema.String).annotate({ description: "the client's address (the socket's peer)" }),
  details: Schema.Record(Schema.String, Schema.Unknown)
}).annotate({ identifier: "AuditEntry" })
export type AuditEntryJson = typeof AuditEntryJson.Type

export const AuditPage = Schema.Struct({
  entries: Schema.Array(AuditEntryJson),
  /** the `before` of the next page; null on the last one */
  next: Schema.NullOr(Schema.String)
}).annotate({ identifier: "AuditPage" })
export type AuditPage = typeof AuditPage.Type
