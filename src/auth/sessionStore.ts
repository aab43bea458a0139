/** The storage port of UI sessions, apart from their logic (uiSessions.ts) so the relational ports need only this. */
import type * as Effect from "effect/Effect"
import type { StoreError } from "../storeError.ts"
import type { OidcIdentity } from "./oidcRules.ts"
import type { ApiKeyInfo } from "./store.ts"

/** whom a session is of: an API key (signed in with it), or a single sign-on identity (src/auth/oidcRules.ts) */
export type SessionPrincipal =
  | { readonly kind: "key"; readonly key: ApiKeyInfo }
  | { readonly kind: "oidc"; readonly identity: OidcIdentity }

/** a single sign-on under way (`GET /v1/ui/oidc/start` to its callback), as stored */
export interface OidcLogin {
  readonly stateHash: Uint8Array
  /** the SHA-256 of the binding cookie's value: the callback must come from the browser that started */
  readonly bindingHash: Uint8Array
  readonly codeVerifier: string
  readonly nonce: string
  readonly returnTo: string
}

/** the storage port of sessions: the relational database (layers/postgres/uiSessions.ts) */
export interface UiSessionStore {
  /** stores a session of key `publicId` or of `identity`, ending `lifetimeS` seconds from now (the database's now); purges ended ones */
  readonly create: (
    session: { readonly idHash: Uint8Array; readonly lifetimeS: number } & ({ readonly publicId: string } | { readonly identity: OidcIdentity })
  ) => Effect.Effect<void, StoreError>
  /** whom the session whose id hashes to `idHash` is of while it lasts (a key as stored now); undefined when none */
  readonly find: (idHash: Uint8Array) => Effect.Effect<SessionPrincipal | undefined, StoreError>
  readonly delete: (idHash: Uint8Array) => Effect.Effect<void, StoreError>
  /** keeps a sign-on under way for `lifetimeS` seconds; purges those that ended */
  readonly saveLogin: (login: OidcLogin, lifetimeS: number) => Effect.Effect<void, StoreError>
  /** the sign-on of state `stateHash`, removed (so taken once) while it lasts; undefined when none */
  readonly takeLogin: (stateHash: Uint8Array) => Effect.Effect<OidcLogin | undefined, StoreError>
}
