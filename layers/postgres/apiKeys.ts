/**
 * API keys on Postgres (`ApiKeyStore` of src/auth/store.ts): the `api_keys` table of the
 * relational database, only the hash of each secret kept.
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as PgTypes from "@effect/sql-pg/PgTypes"
import * as Effect from "effect/Effect"
import { type ApiKeyIssuer, publicIdPattern } from "../../src/auth/apiKey.ts"
import type { ApiKeyInfo, ApiKeyStore, ImportedApiKey, StoredApiKey } from "../../src/auth/store.ts"
import { StoreError } from "../../src/storeError.ts"
import { defaultWorkspace } from "../../src/workspace.ts"
import { sqlState, storeError } from "./client.ts"
import { storableText } from "./rows.ts"

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
  readonly issuer: ApiKeyIssuer
  readonly description: string | null
}

/** the columns of a key but its secret's hash, as `keyInfo` reads them (sessions join them too) */
export const keyInfoColumns = "public_id, created_at, expires_at, disabled_at, admin, workspace, global_admin, issuer, description"

export const keyInfo = (row: Omit<KeyRow, "secret_hash">): ApiKeyInfo => ({
  publicId: row.public_id,
  createdAt: row.created_at.getTime(),
  expiresAt: row.expires_at === null ? undefined : row.expires_at.getTime(),
  disabledAt: row.disabled_at === null ? undefined : row.disabled_at.getTime(),
  admin: row.admin,
  workspace: row.workspace,
  global: row.global_admin,
  issuer: row.issuer,
  ...(row.description === null ? {} : { description: row.description })
})

/** why `key` cannot be imported, or undefined */
const importProblem = (key: ImportedApiKey): string | undefined => {
  if (typeof key.publicId !== "string" || !publicIdPattern.test(key.publicId)) {
    return `the public id ${JSON.stringify(String(key.publicId).slice(0, 40))} is not 12 letters and digits`
  }
  if (!(key.secretHash instanceof Uint8Array) || key.secretHash.length !== 32) {
    return `the secret hash of ${key.publicId} is not the 32 bytes of a SHA-256`
  }
  for (const [name, time] of [["creation", key.createdAt], ["expiration", key.expiresAt], ["disabling", key.disabledAt]] as const) {
    if (time !== undefined && !Number.isFinite(time)) return `the ${name} time of ${key.publicId} is not a finite time`
  }
  if (typeof key.workspace !== "string" || key.workspace === "" || !isStorableText(key.workspace)) {
    return `the workspace of ${key.publicId} must be non-empty text`
  }
  return undefined
}

const optionalTime = (time: number | undefined) => time === undefined ? null : PgTypes.timestamptz(time)

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

  /** one key upserted: what its row was before (undefined: none) and whether the statement wrote it */
  const importKey = (key: ImportedApiKey) =>
    sql<{ issuer: ApiKeyIssuer | null; written: boolean }>`
      WITH existing AS (SELECT issuer FROM api_keys WHERE public_id = ${key.publicId}),
      written AS (
        INSERT INTO api_keys (public_id, secret_hash, created_at, expires_at, disabled_at, workspace, issuer, description)
        VALUES (${key.publicId}, ${key.secretHash}, ${PgTypes.timestamptz(key.createdAt)}, ${optionalTime(key.expiresAt)},
          ${optionalTime(key.disabledAt)}, ${key.workspace}, 'tensorzero', ${storableText(key.description)})
        ON CONFLICT (public_id) DO UPDATE SET
          description = EXCLUDED.description,
          expires_at = EXCLUDED.expires_at,
          -- a key disabled here stays disabled, at its first time
          disabled_at = COALESCE(api_keys.disabled_at, EXCLUDED.disabled_at)
        WHERE api_keys.issuer = 'tensorzero'
          AND (api_keys.description, api_keys.expires_at, api_keys.disabled_at)
            IS DISTINCT FROM (EXCLUDED.description, EXCLUDED.expires_at, COALESCE(api_keys.disabled_at, EXCLUDED.disabled_at))
        RETURNING 1
      )
      SELECT (SELECT issuer FROM existing) AS issuer, EXISTS (SELECT 1 FROM written) AS written`.pipe(
      Effect.map(([row]) => row)
    )

  const importKeys: ApiKeyStore["importKeys"] = (keys) =>
    Effect.gen(function*() {
      for (const key of keys) {
        const problem = importProblem(key)
        if (problem !== undefined) return yield* new StoreError({ message: `postgres import api keys failed: ${problem}` })
      }
      // each public id once (the last given wins), so that the counts count keys
      const byId = new Map(keys.map((key) => [key.publicId, key]))
      const counts = { inserted: 0, updated: 0, refused: 0, refusedPublicIds: [] as Array<string> }
      yield* sql.withTransaction(Effect.forEach(byId.values(), (key) =>
        Effect.map(importKey(key), ({ issuer, written }) => {
          if (issuer === "gateway") {
            counts.refused++
            counts.refusedPublicIds.push(key.publicId)
          } else if (written) counts[issuer === null ? "inserted" : "updated"]++
        }), { discard: true })).pipe(Effect.mapError(storeError("import api keys")))
      return counts
    })

  return { create, disable, find, list, workspaces, importKeys }
}
