/**
 * `POST /internal/config/reload`: loads the configuration again, in this process and (with
 * `[gateway] workers`) in every other worker; 400 with the problems when the files do not
 * validate (the configuration serving stays).
 */
import * as Effect from "effect/Effect"
import type { ConfigInvalid, ConfigReloaded } from "../../src/api/operations.ts"
import { parseApiKey } from "../../src/auth/apiKey.ts"
import { ConfigReload } from "../../src/config/reload.ts"
import { problemCount } from "../configLoader.ts"
import { jsonResponse } from "./respond.ts"
import { configVersionBody } from "./status.ts"

export const reloadConfigHandler = (apiKey: string | undefined) =>
  Effect.flatMap(ConfigReload, ({ reload }) =>
    Effect.map(reload(`POST /internal/config/reload${apiKey === undefined ? "" : ` (key ${parseApiKey(apiKey)?.publicId})`}`), (outcome) => {
      if (outcome.status === "invalid") {
        const body: ConfigInvalid = {
          error: `the configuration is invalid (${problemCount(outcome.errors)}): the configuration serving stays`,
          errors: outcome.errors,
          config: configVersionBody(outcome.version)
        }
        return jsonResponse(JSON.stringify(body), 400)
      }
      const body: ConfigReloaded = {
        status: outcome.status,
        config: configVersionBody(outcome.version),
        warnings: outcome.status === "reloaded" ? outcome.warnings : []
      }
      return jsonResponse(JSON.stringify(body))
    }))
