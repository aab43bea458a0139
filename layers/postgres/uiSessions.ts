/**
 * The web UI's sessions on Postgres (`UiSessionStore` of src/auth/uiSessions.ts): the
 * `ui_sessions` table of the relational database, only the hash of each session id kept. Times
 * are the database's, which every gateway process shares. A session is read joined to its key,
 * so that the key's state (disabled, expired, its role) is the one stored now.
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import type { UiSessionStore } from "../../src/auth/sessionStore.ts"
import { StoreError } from "../../src/storeError.ts"
import { keyInfo, keyInfoColumns } from "./apiKeys.ts"
import { storeError } from "./client.ts"


export const makePostgresUiSessionStore = (sql: PgClient.PgClient): UiSessionStore => {
  const create: UiSessionStore["create"] = ({ idHash, publicId, lifetimeS }) => {
    if (!Number.isInteger(lifetimeS) || lifetimeS <= 0) {
      return Effect.fail(new StoreError({ message: `postgres create ui session failed: the lifetime must be a positive number of seconds, not ${lifetimeS}` }))
    }
    // sign-ins are rare and the table holds one lifetime's sessions: purging here keeps it that small
    return sql`
      WITH purged AS (
        DELETE FROM ui_sessions WHERE expires_at <= now()
          OR public_id IN (SELECT public_id FROM api_keys WHERE disabled_at IS NOT NULL)
      )
      INSERT INTO ui_sessions (id_hash, public_id, expires_at)
      VALUES (${idHash}, ${publicId}, now() + ${lifetimeS}::integer * interval '1 second')`.pipe(
      Effect.asVoid,
      Effect.mapError(storeError("create ui session"))
    )
  }

  const find: UiSessionStore["find"] = (idHash) =>
    sql<Parameters<typeof keyInfo>[0]>`
      SELECT ${sql.literal(keyInfoColumns.split(", ").map((column) => `k.${column}`).join(", "))}
      FROM ui_sessions s JOIN api_keys k ON k.public_id = s.public_id
      WHERE s.id_hash = ${idHash} AND s.expires_at > now()`.pipe(
      Effect.map(([row]) => row === undefined ? undefined : keyInfo(row)),
      Effect.mapError(storeError("find ui session"))
    )

  const remove: UiSessionStore["delete"] = (idHash) =>
    sql`DELETE FROM ui_sessions WHERE id_hash = ${idHash}`.pipe(Effect.asVoid, Effect.mapError(storeError("delete ui session")))

  return { create, find, delete: remove }
}
