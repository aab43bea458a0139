/**
 * `/v1/ui/api_keys`: the API keys of the relational database, for the UI's API keys page: list
 * them, create one (its whole text answered this once: only the hash of its secret is kept), and
 * disable one. The use case is src/auth/keyAdministration.ts, which the command line shares.
 * Without a relational database there are no keys to manage: a 503 says so.
 */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { adminStatuses, bodyStatuses, gatewayErrors } from "./errors.ts"
import { AdminOnly, requiresKey } from "./guard.ts"

const Time = Schema.String.annotate({ description: "an RFC 3339 time, UTC", format: "date-time" })

const apiKeyFields = {
  public_id: Schema.String.annotate({ description: "the 12 characters after `sk-gw-`: the key's name, not a secret" }),
  created_at: Time,
  /** null: the key never expires */
  expires_at: Schema.NullOr(Time),
  /** null: the key is not disabled */
  disabled_at: Schema.NullOr(Time),
  admin: Schema.Boolean.annotate({ description: "the admin role: the UI and its routes" })
}

export const UiApiKey = Schema.Struct(apiKeyFields).annotate({ identifier: "UiApiKey" })
export type UiApiKey = typeof UiApiKey.Type

export const UiApiKeyList = Schema.Struct({
  /** newest first */
  api_keys: Schema.Array(UiApiKey)
}).annotate({ identifier: "UiApiKeyList" })
export type UiApiKeyList = typeof UiApiKeyList.Type

export const CreateUiApiKeyRequest = Schema.Struct({
  expires_at: Schema.optional(Schema.String.annotate({
    description: "when the key stops working: an RFC 3339 time with its offset, in the future (none: it never expires)"
  })),
  admin: Schema.optional(Schema.Boolean.annotate({ description: "give the key the admin role (default false)" }))
}).annotate({ identifier: "CreateUiApiKeyRequest" })
export type CreateUiApiKeyRequest = typeof CreateUiApiKeyRequest.Type

export const CreatedUiApiKey = Schema.Struct({
  api_key: Schema.String.annotate({ description: "the whole key, `sk-gw-<public id>-<secret>`: shown this once, never again" }),
  ...apiKeyFields
}).annotate({ identifier: "CreatedUiApiKey" })
export type CreatedUiApiKey = typeof CreatedUiApiKey.Type

export const UiApiKeysGroup = HttpApiGroup.make("uiApiKeys")
  .add(
    HttpApiEndpoint.get("listUiApiKeys", "/v1/ui/api_keys", { success: UiApiKeyList, error: gatewayErrors(adminStatuses) })
      .annotateMerge(OpenApi.annotations({ summary: "List the API keys, newest first (never their secrets)" })),
    HttpApiEndpoint.post("createUiApiKey", "/v1/ui/api_keys", {
      payload: CreateUiApiKeyRequest,
      success: CreatedUiApiKey,
      error: gatewayErrors([...bodyStatuses, ...adminStatuses])
    })
      .annotateMerge(OpenApi.annotations({ summary: "Create an API key: the answer holds the whole key, the only time it is shown" })),
    HttpApiEndpoint.post("disableUiApiKey", "/v1/ui/api_keys/:public_id/disable", {
      params: { public_id: Schema.String },
      success: UiApiKey,
      error: gatewayErrors([400, 404, ...adminStatuses])
    })
      .annotateMerge(OpenApi.annotations({
        summary: "Disable an API key for good: refused once the gateways' key caches let it go (`cache_ttl_ms`); 404 when no key has the public id"
      }))
  )
  .annotate(AdminOnly, true)
  .annotateEndpointsMerge(requiresKey)
  .annotateMerge(OpenApi.annotations({ title: "UI" }))
