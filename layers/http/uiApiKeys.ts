/**
 * `/v1/ui/api_keys` and `/v1/ui/workspaces` (src/api/uiApiKeys.ts): decode, run the key use case
 * (src/auth/keyAdministration.ts) on the relational database's key store in the caller's
 * workspace, answer JSON.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import { CreateUiApiKeyRequest, type UiApiKey } from "../../src/api/uiApiKeys.ts"
import { ApiKeys } from "../../src/auth/authenticate.ts"
import { createKey, disableKey, listKeys, listWorkspaces, parseExpiration, requireKeyStore } from "../../src/auth/keyAdministration.ts"
import type { ApiKeyInfo } from "../../src/auth/store.ts"
import { makeDecoder } from "../../src/decode.ts"
import { Forbidden } from "../../src/errors.ts"
import { Configuration } from "../../src/services.ts"
import type { Caller } from "../../src/workspace.ts"
import { jsonResponse, readJsonBody } from "./respond.ts"

const decodeCreate = makeDecoder(CreateUiApiKeyRequest)

const time = (epochMs: number | undefined) => epochMs === undefined ? null : new Date(epochMs).toISOString()

const apiKeyJson = (key: ApiKeyInfo): UiApiKey => ({
  public_id: key.publicId,
  created_at: new Date(key.createdAt).toISOString(),
  expires_at: time(key.expiresAt),
  disabled_at: time(key.disabledAt),
  admin: key.admin,
  workspace: key.workspace,
  global: key.global,
  issuer: key.issuer,
  ...(key.description === undefined ? {} : { description: key.description })
})

const keyStore = Effect.flatMap(ApiKeys, (keys) => requireKeyStore(keys.store))

export const listUiApiKeysHandler = (caller: Caller) =>
  Effect.gen(function*() {
    const keys = yield* listKeys(yield* keyStore, caller.workspace)
    return jsonResponse(JSON.stringify({ api_keys: keys.map(apiKeyJson) }))
  })

export const createUiApiKeyHandler = (caller: Caller) => Effect.gen(function*() {
  const store = yield* keyStore
  const config = yield* Configuration
  const request = yield* readJsonBody(decodeCreate, config.gateway.maxRequestBodyBytes)
  let expiresAt: number | undefined
  if (request.expires_at !== undefined) {
    expiresAt = yield* Effect.fromResult(parseExpiration("expires_at", request.expires_at, yield* Clock.currentTimeMillis))
  }
  if (request.global === true && caller.role !== "global") {
    return yield* new Forbidden({ message: "global: only a global admin may make a global admin" })
  }
  const created = yield* createKey(store, { expiresAt, admin: request.admin, global: request.global, workspace: caller.workspace })
  return jsonResponse(JSON.stringify({ api_key: created.apiKey, ...apiKeyJson(created.info) }))
})

export const disableUiApiKeyHandler = (caller: Caller) =>
  Effect.gen(function*() {
    const store = yield* keyStore
    const params = yield* HttpRouter.params
    return jsonResponse(JSON.stringify(apiKeyJson(yield* disableKey(store, params.public_id ?? "", caller.workspace))))
  })

/** the workspaces that have keys (the route is a global admin's) */
export const listUiWorkspacesHandler = Effect.gen(function*() {
  const workspaces = yield* listWorkspaces(yield* keyStore)
  return jsonResponse(JSON.stringify({ workspaces }))
})
