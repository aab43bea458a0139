/** The endpoints of OperationsGroup (the HttpApi contract), over the request and answer Schemas of src/api/operations.ts. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { adminStatuses, gatewayErrors } from "../api/errors.ts"
import { AdminOnly, AdminPurpose, requiresKey, Audited } from "./guard.ts"
import { ConfigInvalid, ConfigReloaded } from "../api/operations.ts"

export const OperationsGroup = HttpApiGroup.make("operations")
  .add(
    HttpApiEndpoint.post("reloadConfig", "/internal/config/reload", {
      query: {
        // any text, so that the handler's 400 names the parameter (the router's decoding answers an empty 400)
        force: Schema.optional(Schema.String).annotate({
          description:
            "`true` or `false` (the default). true: apply a configuration that defines no functions and no models while the one serving defines some (refused otherwise: an empty or truncated file reads as one)"
        })
      },
      success: ConfigReloaded,
      error: [ConfigInvalid, ...gatewayErrors([400, ...adminStatuses])]
    }).annotate(Audited, "config.reload")
      .annotateMerge(OpenApi.annotations({
        summary: "Load the configuration files again, as SIGHUP does: in every worker; requests in flight finish on the old configuration"
      }))
  )
  .annotate(AdminOnly, true)
  .annotate(AdminPurpose, "reloading the configuration")
  .annotateEndpointsMerge(requiresKey)
  .annotateMerge(OpenApi.annotations({ title: "Operations" }))
