/**
 * API keys on Postgres (`ApiKeyStore` of src/auth/store.ts): the `api_keys` table of the
 * relational database, only the hash of each secret kept.
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as PgTypes from "@effect/sql-pg/PgTypes"
import * as Effect from "effect/Effect"
import type { ApiKeyInfo, ApiKeyStore, StoredApiKey } from "../../src/auth/store.ts"
import { StoreError } from "../../src/storeError.ts"
import { defaultWorkspace } from "../../src/workspace.ts"
import { sqlState, storeError } from "./client.ts"

/** Postgres text holds neither NUL nor (through the driver) lone surrogates. */
const isStorableText = (text: string) => !text.includes("\0") && text.isWellFormed()

interface KeyRow {
  readonly public_id: string
  readonly secret_hash: Uint8Array
  readonly created_at: Date
  readonly expires_at: Date | null
  readonly disabled_at: Date | null
  readonly admin: boolean
  readonly workspace: string
  readonly global_admin: boolean
}

/** the columns of a key but its secret's hash, as `keyInfo` reads them (sessions join them too) */
export const keyInfoColumns = "public_id, created_at, expires_at, disabled_at, admin, workspace, global_admin"

export const keyInfo = (row: Omit<KeyRow, "secret_hash">): ApiKeyInfo => ({
  publicId: row.public_id,
  createdAt: row.created_at.getTime(),
  expiresAt: row.expires_at === null ? undefined : row.expires_at.getTime(),
  disabledAt: row.disabled_at === null ? undefined : row.disabled_at.getTime(),
  admin: row.admin,
  workspace: row.workspace,
  global: row.global_admin
})

export const makePostgresApiKeyStore = (sql: PgClient.PgClient): ApiKeyStore => {
  const create: ApiKeyStore["create"] = (key) => {
    if (typeof key.publicId !== "string" || key.publicId === "" || !isStorableText(key.publicId)) {
      return Effect.fail(new StoreError({ message: "postgres create api key failed: the public id must be non-empty text" }))
    }
    if (!(key.secretHash instanceof Uint8Array)) {
      return Effect.fail(new StoreError({ message: "postgres create api key failed: the secret hash must be bytes" }))
    }
    if (key.expiresAt !== undefined && !Number.isFinite(key.expiresAt)) {
      return Effect.fail(new StoreError({ message: `postgres create api key failed: the expiration must be a finite time, not ${key.expiresAt}` }))
    }
    const expiresAt = key.expiresAt === undefined ? null : PgTypes.timestamptz(key.expiresAt)
    if (typeof key.workspace !== "string" || key.workspace === "" || !isStorableText(key.workspace)) {
      return Effect.fail(new StoreError({ message: "postgres create api key failed: the workspace must be non-empty text" }))
    }
    const global = key.global === true
    return sql`INSERT INTO api_keys (public_id, secret_hash, expires_at, admin, workspace, global_admin)
      VALUES (${key.publicId}, ${key.secretHash}, ${expiresAt}, ${key.admin === true || global}, ${key.workspace}, ${global})`.pipe(
      Effect.asVoid,
      Effect.mapError((error) =>
        sqlState(error) === "23505"
          ? new StoreError({ message: `postgres create api key failed: the public id ${key.publicId} is taken` })
          : storeError("create api key")(error)
      )
    )
  }

  const disable: ApiKeyStore["disable"] = (publicId, workspace) => {
    // a key that cannot be stored does not exist
    if (typeof publicId !== "string" || !isStorableText(publicId) || (workspace !== undefined && !isStorableText(workspace))) {
      return Effect.succeed(false)
    }
    // another workspace's key is no key of this one
    const inWorkspace = workspace === undefined ? sql`TRUE` : sql`workspace = ${workspace}`
    return sql<{ found: boolean }>`
      WITH disabled AS (
        UPDATE api_keys SET disabled_at = now() WHERE public_id = ${publicId} AND ${inWorkspace} AND disabled_at IS NULL RETURNING 1
      )
      SELECT EXISTS (SELECT 1 FROM api_keys WHERE public_id = ${publicId} AND ${inWorkspace}) AS found`.pipe(
      Effect.map(([row]) => row.found),
      Effect.mapError(storeError("disable api key"))
    )
  }

  const find: ApiKeyStore["find"] = (publicId) =>
    typeof publicId !== "string" || !isStorableText(publicId) ? Effect.succeed(undefined) : sql<KeyRow>`
      SELECT secret_hash, ${sql.literal(keyInfoColumns)} FROM api_keys WHERE public_id = ${publicId}`.pipe(
      Effect.map(([row]): StoredApiKey | undefined =>
        row === undefined ? undefined : { ...keyInfo(row), secretHash: new Uint8Array(row.secret_hash) }
      ),
      Effect.mapError(storeError("find api key"))
    )

  const list: ApiKeyStore["list"] = (workspace) =>
    sql<Omit<KeyRow, "secret_hash">>`
      SELECT ${sql.literal(keyInfoColumns)} FROM api_keys
      ${workspace === undefined ? sql`` : sql`WHERE workspace = ${workspace}`}
      ORDER BY created_at DESC, public_id`.pipe(
      Effect.map((rows) => rows.map(keyInfo)),
      Effect.mapError(storeError("list api keys"))
    )

  const workspaces: ApiKeyStore["workspaces"] = () =>
    sql<{ workspace: string }>`
      SELECT workspace FROM api_keys UNION SELECT ${defaultWorkspace} ORDER BY workspace`.pipe(
      Effect.map((rows) => rows.map((row) => row.workspace)),
      Effect.mapError(storeError("list workspaces"))
    )

  return { create, disable, find, list, workspaces }
}
