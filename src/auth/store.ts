/**
 * The storage port of API keys: the relational database (Postgres, GATEWAY_RELATIONAL_DB_URL,
 * layers/postgres/apiKeys.ts), shared by every gateway process. Only the hash of each secret
 * is kept.
 */
import type * as Effect from "effect/Effect"
import type { StoreError } from "../storeError.ts"

export interface StoredApiKey {
  readonly publicId: string
  readonly secretHash: Uint8Array
  /** epoch ms */
  readonly createdAt: number
  readonly expiresAt?: number | undefined
  readonly disabledAt?: number | undefined
  /** the `admin` role: the web UI and its routes */
  readonly admin: boolean
}

/** A key as the UI lists it: everything but the hash of its secret. */
export type ApiKeyInfo = Omit<StoredApiKey, "secretHash">

export interface ApiKeyStore {
  readonly create: (key: {
    readonly publicId: string
    readonly secretHash: Uint8Array
    readonly expiresAt?: number | undefined
    readonly admin?: boolean | undefined
  }) => Effect.Effect<void, StoreError>
  /** every key, newest first */
  readonly list: () => Effect.Effect<ReadonlyArray<ApiKeyInfo>, StoreError>
  /** false when no key has this public id */
  readonly disable: (publicId: string) => Effect.Effect<boolean, StoreError>
  readonly find: (publicId: string) => Effect.Effect<StoredApiKey | undefined, StoreError>
}
