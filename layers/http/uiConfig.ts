/** `GET /v1/ui/config`: the loaded configuration as the UI shows it, turned into JSON once. */
import * as Effect from "effect/Effect"
import { configView } from "../../src/config/view.ts"
import { Configuration } from "../../src/services.ts"
import { jsonResponse } from "./respond.ts"

let cached: { readonly config: unknown; readonly body: string } | undefined

export const getUiConfigHandler = Effect.map(Configuration, (config) => {
  if (cached?.config !== config) cached = { config, body: JSON.stringify(configView(config)) }
  return jsonResponse(cached.body)
})
