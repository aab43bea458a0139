/** The endpoints of UiSessionGroup (the HttpApi contract), over the request and answer Schemas of src/api/uiSession.ts. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
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
    HttpApiEndpoint.delete("signOut", "/v1/ui/session", { success: UiSession, error: gatewayErrors([503]) })
      .annotateMerge(OpenApi.annotations({ summary: "Sign the UI out: ends the session in every gateway, and expires both cookies (503: the session could not be ended)" }))
  )
  .annotate(Open, true)
  .annotateMerge(OpenApi.annotations({ title: "UI session" }))
