/**
 * The storage port of the audit log (src/audit/service.ts): the relational database's
 * `audit_log` table (layers/postgres/audit.ts), append-only.
 */
import type * as Effect from "effect/Effect"
import type { StoreError } from "../storeError.ts"

/**
 * who acted: an API key (its public id), the UI's session of one, the UI's session of a single
 * sign-on identity (its email, else its subject), the command line (the OS user), or anyone
 * (authentication off)
 */
export type ActorKind = "api_key" | "ui_session" | "oidc" | "cli" | "open"

export interface AuditEntry {
  /** UUIDv7: the entries' order, newest first by id */
  readonly id: string
  /** epoch ms, the gateway's clock (the id's time) */
  readonly at: number
  /** the workspace acted on */
  readonly workspace: string
  readonly actorKind: ActorKind
  readonly actor?: string | undefined
  /** what was done, e.g. `api_key.create`, `dataset.delete`, `ui.sign_in` */
  readonly action: string
  /** what it was done to: a key's public id, a dataset's name, a task's id */
  readonly target?: string | undefined
  readonly outcome: "success" | "failure"
  /** the HTTP status answered, for an act over HTTP */
  readonly status?: number | undefined
  /** the client's address (the socket's peer) */
  readonly address?: string | undefined
  readonly details?: Readonly<Record<string, unknown>> | undefined
}

export interface AuditQuery {
  /** undefined: every workspace (a global admin's view) */
  readonly workspace?: string | undefined
  readonly actor?: string | undefined
  readonly action?: string | undefined
  /** epoch ms, inclusive */
  readonly since?: number | undefined
  /** epoch ms, exclusive */
  readonly until?: number | undefined
  /** the page after this entry id (the last of the previous page) */
  readonly before?: string | undefined
  readonly limit: number
}

export interface AuditStore {
  readonly append: (entry: AuditEntry) => Effect.Effect<void, StoreError>
  /** the matching entries, newest first */
  readonly list: (query: AuditQuery) => Effect.Effect<ReadonlyArray<AuditEntry>, StoreError>
}
