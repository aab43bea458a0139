/** The storage port of UI sessions, apart from their logic (uiSessions.ts) so the relational ports need only this. */
import type * as Effect from "effect/Effect"
import type { StoreError } from "../storeError.ts"
import type { ApiKeyInfo } from "./store.ts"

/** the storage port of sessions: the relational database (layers/postgres/uiSessions.ts) */
export interface UiSessionStore {
  /** stores a session of key `publicId` ending `lifetimeS` seconds from now (the database's now); purges ended ones */
  readonly create: (session: { readonly idHash: Uint8Array; readonly publicId: string; readonly lifetimeS: number }) => Effect.Effect<void, StoreError>
  /** the key of the session whose id hashes to `idHash` while the session lasts, as stored now; undefined when none */
  readonly find: (idHash: Uint8Array) => Effect.Effect<ApiKeyInfo | undefined, StoreError>
  readonly delete: (idHash: Uint8Array) => Effect.Effect<void, StoreError>
}
