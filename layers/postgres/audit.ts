/**
 * The audit log on Postgres (`AuditStore` of src/audit/store.ts): the `audit_log` table of the
 * relational database (migrations/postgres/0024_audit_log.sql), which refuses every change but
 * an insert. Pages go newest first by id (UUIDv7: time order), the next one after the last id.
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as PgTypes from "@effect/sql-pg/PgTypes"
import * as Effect from "effect/Effect"
import type { ActorKind, AuditEntry, AuditStore } from "../../src/audit/store.ts"
import { isUuid } from "../../src/ids.ts"
import { storeError } from "./client.ts"

interface AuditRow {
  readonly id: string
  readonly occurred_at: Date
  readonly workspace: string
  readonly actor_kind: ActorKind
  readonly actor: string | null
  readonly action: string
  readonly target: string | null
  readonly outcome: "success" | "failure"
  readonly status: number | null
  readonly address: string | null
  readonly details: Record<string, unknown>
}

/** Postgres text holds no NUL: an entry keeps what it can say */
const text = (value: string | undefined) => value === undefined ? null : value.replaceAll("\0", "\uFFFD")

const toEntry = (row: AuditRow): AuditEntry => ({
  id: row.id,
  at: row.occurred_at.getTime(),
  workspace: row.workspace,
  actorKind: row.actor_kind,
  ...(row.actor !== null && { actor: row.actor }),
  action: row.action,
  ...(row.target !== null && { target: row.target }),
  outcome: row.outcome,
  ...(row.status !== null && { status: row.status }),
  ...(row.address !== null && { address: row.address }),
  ...(Object.keys(row.details).length > 0 && { details: row.details })
})

export const makePostgresAuditStore = (sql: PgClient.PgClient): AuditStore => ({
  append: (entry) =>
    sql`INSERT INTO audit_log (id, occurred_at, workspace, actor_kind, actor, action, target, outcome, status, address, details)
      VALUES (${entry.id}, ${PgTypes.timestamptz(entry.at)}, ${text(entry.workspace)}, ${entry.actorKind}, ${text(entry.actor)},
        ${text(entry.action)}, ${text(entry.target)}, ${entry.outcome}, ${entry.status ?? null}, ${text(entry.address)},
        ${JSON.stringify(entry.details ?? {}).replaceAll("\\u0000", "\\ufffd")}::jsonb)`.pipe(
      Effect.asVoid,
      Effect.mapError(storeError("append audit entry"))
    ),

  list: (query) => {
    const conditions = [
      query.workspace === undefined ? undefined : sql`workspace = ${query.workspace}`,
      query.actor === undefined ? undefined : sql`actor = ${text(query.actor)}`,
      query.action === undefined ? undefined : sql`action = ${text(query.action)}`,
      query.since === undefined ? undefined : sql`occurred_at >= ${PgTypes.timestamptz(query.since)}`,
      query.until === undefined ? undefined : sql`occurred_at < ${PgTypes.timestamptz(query.until)}`,
      query.before === undefined || !isUuid(query.before) ? undefined : sql`id < ${query.before}::uuid`
    ].filter((condition) => condition !== undefined)
    return sql<AuditRow>`
      SELECT id, occurred_at, workspace, actor_kind, actor, action, target, outcome, status, address, details FROM audit_log
      ${conditions.length === 0 ? sql`` : sql`WHERE ${sql.and(conditions)}`}
      ORDER BY id DESC LIMIT ${query.limit}`.pipe(
      Effect.map((rows) => rows.map(toEntry)),
      Effect.mapError(storeError("list audit entries"))
    )
  }
})
