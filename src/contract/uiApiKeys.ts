/** The endpoints of UiApiKeysGroup (the HttpApi contract), over the request and answer Schemas of src/api/uiApiKeys.ts. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { adminStatuses, bodyStatuses, gatewayErrors } from "../api/errors.ts"
import { AdminOnly, requiresKey } from "./guard.ts"
import { CreateUiApiKeyRequest, CreatedUiApiKey, UiApiKey, UiApiKeyList } from "../api/uiApiKeys.ts"

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
