/** The endpoints of UiApiKeysGroup (the HttpApi contract), over the request and answer Schemas of src/api/uiApiKeys.ts. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { adminStatuses, bodyStatuses, gatewayErrors } from "../api/errors.ts"
import { AdminOnly, AdminPurpose, GlobalAdminOnly, requiresKey, Audited } from "./guard.ts"
import { CreateUiApiKeyRequest, CreatedUiApiKey, UiApiKey, UiApiKeyList, UiWorkspaceList } from "../api/uiApiKeys.ts"

export const UiApiKeysGroup = HttpApiGroup.make("uiApiKeys")
  .add(
    HttpApiEndpoint.get("listUiApiKeys", "/v1/ui/api_keys", { success: UiApiKeyList, error: gatewayErrors(adminStatuses) })
      .annotateMerge(OpenApi.annotations({ summary: "List the API keys of the caller's workspace, newest first (never their secrets)" })),
    HttpApiEndpoint.post("createUiApiKey", "/v1/ui/api_keys", {
      payload: CreateUiApiKeyRequest,
      success: CreatedUiApiKey,
      error: gatewayErrors([...bodyStatuses, ...adminStatuses])
    }).annotate(Audited, "api_key.create")
      .annotateMerge(OpenApi.annotations({ summary: "Create an API key in the caller's workspace: the answer holds the whole key, the only time it is shown" })),
    HttpApiEndpoint.post("disableUiApiKey", "/v1/ui/api_keys/:public_id/disable", {
      params: { public_id: Schema.String },
      success: UiApiKey,
      error: gatewayErrors([400, 404, ...adminStatuses])
    }).annotate(Audited, "api_key.disable")
      .annotateMerge(OpenApi.annotations({
        summary: "Disable an API key for good: refused once the gateways' key caches let it go (`cache_ttl_ms`); 404 when no key of the caller's workspace has the public id"
      }))
  )
  .annotate(AdminOnly, true)
  .annotateEndpointsMerge(requiresKey)
  .annotateMerge(OpenApi.annotations({ title: "UI" }))

/** `/v1/ui/workspaces`: a global admin's (any other key gets a 403) */
export const UiWorkspacesGroup = HttpApiGroup.make("uiWorkspaces")
  .add(
    HttpApiEndpoint.get("listUiWorkspaces", "/v1/ui/workspaces", { success: UiWorkspaceList, error: gatewayErrors(adminStatuses) })
      .annotateMerge(OpenApi.annotations({ summary: "List the workspaces that have keys (and `default`): a global admin's route" }))
  )
  .annotate(AdminOnly, true)
  .annotate(GlobalAdminOnly, true)
  .annotate(AdminPurpose, "listing the workspaces")
  .annotateEndpointsMerge(requiresKey)
  .annotateMerge(OpenApi.annotations({ title: "UI" }))
