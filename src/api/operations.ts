/**
 * The request and answer Schemas of operating a running gateway: `POST /internal/config/reload` loads the
 * configuration files again (like `SIGHUP`). With authentication on it needs an admin key.
 */
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as Schema from "effect/Schema"

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
