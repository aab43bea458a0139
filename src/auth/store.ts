/**
 * The storage port of API keys: the relational database (Postgres, GATEWAY_RELATIONAL_DB_URL,
 * layers/postgres/apiKeys.ts), shared by every gateway process. Only the hash of each secret
 * is kept.
 */
import type * as Effect from "effect/Effect"
import type { StoreError } from "../storeError.ts"
import type { ApiKeyIssuer } from "./apiKey.ts"

export interface StoredApiKey {
  readonly publicId: string
  readonly secretHash: Uint8Array
  /** epoch ms */
  readonly createdAt: number
  readonly expiresAt?: number | undefined
  readonly disabledAt?: number | undefined
  /** the `admin` role: the web UI and its routes, in the key's workspace */
  readonly admin: boolean
  /** the workspace the key belongs to (src/workspace.ts) */
  readonly workspace: string
  /** a global admin (always an admin too): acts on any workspace, named by the request's `gateway-workspace` header */
  readonly global: boolean
  /** who issued the key: it authenticates only with its issuer's prefix (src/auth/apiKey.ts) */
  readonly issuer: ApiKeyIssuer
  /** what the key is for, as TensorZero described it (keys made here have none) */
  readonly description?: string | undefined
}

/** A key issued by TensorZero, as `gateway import-tensorzero` read it. */
export interface ImportedApiKey {
  /** TensorZero's public id: 12 letters and digits, mixed case */
  readonly publicId: string
  /** SHA-256 of the secret (TensorZero's `hash`, hex-decoded) */
  readonly secretHash: Uint8Array
  readonly description?: string | undefined
  /** epoch ms */
  readonly createdAt: number
  readonly expiresAt?: number | undefined
  readonly disabledAt?: number | undefined
  readonly workspace: string
}

/**
 * What an import of keys did: keys new here, TensorZero keys changed since the last import, and
 * keys refused because this gateway issued a key with the same public id (never overwritten).
 * An imported key that did not change counts in none.
 */
export interface KeyImportCounts {
  readonly inserted: number
  readonly updated: number
  readonly refused: number
  readonly refusedPublicIds: ReadonlyArray<string>
}

/** A key as the UI lists it: everything but the hash of its secret. */
export type ApiKeyInfo = Omit<StoredApiKey, "secretHash">

export interface ApiKeyStore {
  readonly create: (key: {
    readonly publicId: string
    readonly secretHash: Uint8Array
    readonly expiresAt?: number | undefined
    readonly admin?: boolean | undefined
    readonly workspace: string
    readonly global?: boolean | undefined
  }) => Effect.Effect<void, StoreError>
  /** the keys of `workspace` (every key when undefined), newest first */
  readonly list: (workspace: string | undefined) => Effect.Effect<ReadonlyArray<ApiKeyInfo>, StoreError>
  /** false when no key has this public id (in `workspace`, when given) */
  readonly disable: (publicId: string, workspace?: string | undefined) => Effect.Effect<boolean, StoreError>
  /** the workspaces that have keys, and `default`, sorted */
  readonly workspaces: () => Effect.Effect<ReadonlyArray<string>, StoreError>
  readonly find: (publicId: string) => Effect.Effect<StoredApiKey | undefined, StoreError>
  /**
   * Upserts keys TensorZero issued, by public id: new ones are inserted; an imported one takes
   * the description, expiration and disabling given, though a key disabled here stays disabled
   * (at its first time); a key this gateway issued is never touched, its id refused.
   */
  readonly importKeys: (keys: ReadonlyArray<ImportedApiKey>) => Effect.Effect<KeyImportCounts, StoreError>
}
