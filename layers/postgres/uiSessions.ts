/**
 * The web UI's sessions on Postgres (`UiSessionStore` of src/auth/uiSessions.ts): the
 * `ui_sessions` table of the relational database, only the hash of each session id kept. Times
 * are the database's, which every gateway process shares. A session of a key is read joined to
 * it, so that the key's state (disabled, expired, its role) is the one stored now; a session of a
 * single sign-on identity holds the workspace and role its rule granted at sign-in. Sign-ons
 * under way live in `ui_oidc_logins`, taken by `DELETE ... RETURNING` so that each state is
 * used once, whichever gateway serves the callback.
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import type { OidcRole } from "../../src/auth/oidcRules.ts"
import type { UiSessionStore } from "../../src/auth/sessionStore.ts"
import { StoreError } from "../../src/storeError.ts"
import { keyInfo, keyInfoColumns } from "./apiKeys.ts"
import { storeError } from "./client.ts"

type KeyRow = Parameters<typeof keyInfo>[0]

interface SessionRow {
  readonly session_public_id: string | null
  readonly oidc_subject: string | null
  readonly oidc_email: string | null
  readonly session_workspace: string | null
  readonly session_role: OidcRole | null
}

const positiveSeconds = (what: string, lifetimeS: number) =>
  Number.isInteger(lifetimeS) && lifetimeS > 0
    ? undefined
    : new StoreError({ message: `postgres ${what} failed: the lifetime must be a positive number of seconds, not ${lifetimeS}` })

export const makePostgresUiSessionStore = (sql: PgClient.PgClient): UiSessionStore => {
  const create: UiSessionStore["create"] = (session) => {
    const { idHash, lifetimeS } = session
    const invalid = positiveSeconds("create ui session", lifetimeS)
    if (invalid !== undefined) return Effect.fail(invalid)
    const identity = "identity" in session ? session.identity : undefined
    const publicId = "publicId" in session ? session.publicId : null
    // sign-ins are rare and the table holds one lifetime's sessions: purging here keeps it that small
    return sql`
      WITH purged AS (
        DELETE FROM ui_sessions WHERE expires_at <= now()
          OR public_id IN (SELECT public_id FROM api_keys WHERE disabled_at IS NOT NULL)
      )
      INSERT INTO ui_sessions (id_hash, public_id, oidc_subject, oidc_email, workspace, role, expires_at)
      VALUES (${idHash}, ${publicId}, ${identity?.subject ?? null}, ${identity?.email ?? null}, ${identity?.workspace ?? null},
        ${identity?.role ?? null}, now() + ${lifetimeS}::integer * interval '1 second')`.pipe(
      Effect.asVoid,
      Effect.mapError(storeError("create ui session"))
    )
  }

  const keyColumns = sql.literal(keyInfoColumns.split(", ").map((column) => `k.${column}`).join(", "))
  const find: UiSessionStore["find"] = (idHash) =>
    sql<KeyRow & SessionRow>`
      SELECT ${keyColumns}, s.public_id AS session_public_id, s.oidc_subject, s.oidc_email,
        s.workspace AS session_workspace, s.role AS session_role
      FROM ui_sessions s LEFT JOIN api_keys k ON k.public_id = s.public_id
      WHERE s.id_hash = ${idHash} AND s.expires_at > now()`.pipe(
      Effect.map(([row]) => {
        if (row === undefined) return undefined
        if (row.oidc_subject !== null && row.session_workspace !== null && row.session_role !== null) {
          return {
            kind: "oidc" as const,
            identity: { subject: row.oidc_subject, email: row.oidc_email ?? undefined, workspace: row.session_workspace, role: row.session_role }
          }
        }
        // a key's session whose key is gone names no one
        return row.session_public_id === null || row.public_id === null ? undefined : { kind: "key" as const, key: keyInfo(row) }
      }),
      Effect.mapError(storeError("find ui session"))
    )

  const remove: UiSessionStore["delete"] = (idHash) =>
    sql`DELETE FROM ui_sessions WHERE id_hash = ${idHash}`.pipe(Effect.asVoid, Effect.mapError(storeError("delete ui session")))

  const saveLogin: UiSessionStore["saveLogin"] = (login, lifetimeS) => {
    const invalid = positiveSeconds("save oidc login", lifetimeS)
    if (invalid !== undefined) return Effect.fail(invalid)
    return sql`
      WITH purged AS (DELETE FROM ui_oidc_logins WHERE expires_at <= now())
      INSERT INTO ui_oidc_logins (state_hash, binding_hash, code_verifier, nonce, return_to, expires_at)
      VALUES (${login.stateHash}, ${login.bindingHash}, ${login.codeVerifier}, ${login.nonce}, ${login.returnTo},
        now() + ${lifetimeS}::integer * interval '1 second')`.pipe(Effect.asVoid, Effect.mapError(storeError("save oidc login")))
  }

  const takeLogin: UiSessionStore["takeLogin"] = (stateHash) =>
    sql<{ binding_hash: Uint8Array; code_verifier: string; nonce: string; return_to: string; live: boolean }>`
      DELETE FROM ui_oidc_logins WHERE state_hash = ${stateHash}
      RETURNING binding_hash, code_verifier, nonce, return_to, expires_at > now() AS live`.pipe(
      Effect.map(([row]) =>
        row === undefined || !row.live
          ? undefined
          : { stateHash, bindingHash: new Uint8Array(row.binding_hash), codeVerifier: row.code_verifier, nonce: row.nonce, returnTo: row.return_to }
      ),
      Effect.mapError(storeError("take oidc login"))
    )

  return { create, find, delete: remove, saveLogin, takeLogin }
}
