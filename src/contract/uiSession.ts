/** The endpoints of UiSessionGroup (the HttpApi contract), over the request and answer Schemas of src/api/uiSession.ts. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { bodyStatuses, gatewayErrors } from "../api/errors.ts"
import { Open } from "./guard.ts"
import { SignInRequest, UiSession } from "../api/uiSession.ts"

export const UiSessionGroup = HttpApiGroup.make("uiSession")
  .add(
    HttpApiEndpoint.get("getUiSession", "/v1/ui/session", { success: UiSession })
      .annotateMerge(OpenApi.annotations({ summary: "Whether the UI needs a key, and whether this browser is signed in" })),
    HttpApiEndpoint.post("signIn", "/v1/ui/session", {
      payload: SignInRequest,
      success: UiSession,
      error: gatewayErrors([...bodyStatuses, 401, 403, 429, 503])
    })
      .annotateMerge(OpenApi.annotations({
        summary: "Sign the UI in with an admin key: sets the session and CSRF cookies (401: not a valid key; 403: not an admin key)"
      })),
    HttpApiEndpoint.get("oidcStart", "/v1/ui/oidc/start", {
      query: { return_to: Schema.optional(Schema.String).annotate({ description: "where the UI goes once signed in: a path under `<base_path>/ui/` (anything else: the UI's home)" }) },
      success: HttpApiSchema.Empty(302),
      error: gatewayErrors([404, 503])
    })
      .annotateMerge(OpenApi.annotations({
        summary: "Single sign-on (`[gateway.ui.oidc]`): sends the browser to the identity provider (302), with a short-lived binding cookie (404: not configured; 503: the provider is unreachable)"
      })),
    HttpApiEndpoint.get("oidcCallback", "/v1/ui/oidc/callback", {
      query: {
        code: Schema.optional(Schema.String),
        state: Schema.optional(Schema.String),
        error: Schema.optional(Schema.String)
      },
      success: Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/html" })),
      error: gatewayErrors([400, 401, 403, 404, 503])
    })
      .annotateMerge(OpenApi.annotations({
        summary:
          "Single sign-on's return from the identity provider: sets the session and CSRF cookies and answers a page that goes on to the UI (400: an unknown, used or foreign state; 403: no rule maps the identity; 503: the provider is unreachable). Each outcome is in the audit log"
      })),
    HttpApiEndpoint.delete("signOut", "/v1/ui/session", { success: UiSession, error: gatewayErrors([503]) })
      .annotateMerge(OpenApi.annotations({ summary: "Sign the UI out: ends the session in every gateway, and expires both cookies (503: the session could not be ended)" }))
  )
  .annotate(Open, true)
  .annotateMerge(OpenApi.annotations({ title: "UI session" }))
