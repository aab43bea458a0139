/**
 * The wire contract of operating a running gateway: `POST /internal/config/reload` loads the
 * configuration files again (like `SIGHUP`). With authentication on it needs an admin key.
 */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { adminStatuses, gatewayErrors } from "./errors.ts"
import { AdminOnly, AdminPurpose, requiresKey } from "./guard.ts"

/** the configuration serving new requests, in `/status` and the reload's answer */
export const ConfigVersionBody = Schema.Struct({
  hash: Schema.String.annotate({ description: "SHA-256 (hex) of the configuration files and of the templates and schemas they name, paths and contents" }),
  loaded_at: Schema.String.annotate({ description: "when it was loaded, RFC 3339 UTC", format: "date-time" })
}).annotate({ identifier: "ConfigVersion" })
export type ConfigVersionBody = typeof ConfigVersionBody.Type

export const ConfigReloaded = Schema.Struct({
  status: Schema.Literals(["reloaded", "unchanged"]).annotate({
    description: "reloaded: new requests run on the new configuration; unchanged: the files read the same, nothing was rebuilt"
  }),
  config: ConfigVersionBody,
  warnings: Schema.Array(Schema.String).annotate({ description: "what the new configuration should change, as logged at start-up" })
}).annotate({ identifier: "ConfigReloaded" })
export type ConfigReloaded = typeof ConfigReloaded.Type

export const ConfigInvalid = Schema.Struct({
  error: Schema.String,
  errors: Schema.Array(Schema.String).annotate({ description: "every problem, each naming its file and field, as start-up prints them" }),
  config: ConfigVersionBody.annotate({ description: "the configuration that keeps serving" })
}).pipe(HttpApiSchema.status(400)).annotate({
  identifier: "ConfigInvalid",
  description: "The files do not validate, or would remove every function and model without `force=true`: the configuration serving stays"
})
export type ConfigInvalid = typeof ConfigInvalid.Type

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
    })
      .annotateMerge(OpenApi.annotations({
        summary: "Load the configuration files again, as SIGHUP does: in every worker; requests in flight finish on the old configuration"
      }))
  )
  .annotate(AdminOnly, true)
  .annotate(AdminPurpose, "reloading the configuration")
  .annotateEndpointsMerge(requiresKey)
  .annotateMerge(OpenApi.annotations({ title: "Operations" }))
