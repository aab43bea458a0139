/**
 * `POST /internal/config/reload`: loads the configuration again, in this process and (with
 * `[gateway] workers`) in every other worker; 400 with the problems when the files do not
 * validate, or when they would remove every function and model (an empty or truncated file)
 * unless `?force=true` (the configuration serving stays).
 */
import * as Effect from "effect/Effect"
import type { ConfigInvalid, ConfigReloaded } from "../../src/api/operations.ts"
import { ConfigReload } from "../../src/config/reload.ts"
import { problemCount } from "../configLoader.ts"
import { booleanParam, queryParams } from "./query.ts"
import { jsonResponse } from "./respond.ts"
import { configVersionBody } from "./status.ts"
import type { Caller } from "../../src/workspace.ts"

export const reloadConfigHandler = (caller: Caller) =>
  Effect.gen(function*() {
    const force = yield* booleanParam(yield* queryParams, "force")
    const { reload } = yield* ConfigReload
    const outcome = yield* reload(`POST /internal/config/reload${caller.publicId === undefined ? "" : ` (key ${caller.publicId})`}`, { force })
    if (outcome.status === "invalid" || outcome.status === "refused") {
      const body: ConfigInvalid = outcome.status === "invalid"
        ? {
          error: `the configuration is invalid (${problemCount(outcome.errors)}): the configuration serving stays`,
          errors: outcome.errors,
          config: configVersionBody(outcome.version)
        }
        : { error: `${outcome.reason}: the configuration serving stays`, errors: [outcome.reason], config: configVersionBody(outcome.version) }
      return jsonResponse(JSON.stringify(body), 400)
    }
    const body: ConfigReloaded = {
      status: outcome.status,
      config: configVersionBody(outcome.version),
      warnings: outcome.status === "reloaded" ? outcome.warnings : []
    }
    return jsonResponse(JSON.stringify(body))
  })
