/**
 * Loading the configuration again while the gateway runs (`SIGHUP`, `POST
 * /internal/config/reload`, `--watch-config`): requests that start after a successful reload
 * run on the new configuration, those in flight finish on the one they started with. The
 * shell implements it (layers/reload.ts); this is what handlers and `/status` see of it.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { GatewayConfig } from "./types.ts"

/** which configuration serves new requests: the hash of what was read, and when it was loaded */
export interface ConfigVersion {
  /** SHA-256 (hex) of the configuration files' and their templates' and schemas' paths and contents */
  readonly hash: string
  /** epoch milliseconds */
  readonly loadedAt: number
}

export type ReloadOutcome =
  /** the new configuration serves new requests; `warnings` as at start-up */
  | { readonly status: "reloaded"; readonly version: ConfigVersion; readonly warnings: ReadonlyArray<string> }
  /** the files read the same as the configuration serving (same hash): nothing was rebuilt */
  | { readonly status: "unchanged"; readonly version: ConfigVersion }
  /** the files do not validate: the configuration serving stays; its problems, as start-up prints them */
  | { readonly status: "invalid"; readonly version: ConfigVersion; readonly errors: ReadonlyArray<string> }
  /** the files validate but would remove every function and model (`removesEverything`): the configuration serving stays */
  | { readonly status: "refused"; readonly version: ConfigVersion; readonly reason: string }

export interface ReloadOptions {
  /** apply a configuration that `removesEverything` would refuse (never from SIGHUP or `--watch-config`) */
  readonly force?: boolean | undefined
}

/** what a configuration defines itself (the built-in `gateway::` functions aside) */
const definedCounts = (config: GatewayConfig) => ({
  functions: [...config.functions.keys()].filter((name) => !name.startsWith("gateway::")).length,
  models: config.models.size + config.embeddingModels.size
})

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? "" : "s"}`

/**
 * Why a reload from `serving` to `next` is refused unless forced, or undefined: `next` defines no
 * function and no model (nor embedding model) while `serving` defines some. An empty or
 * truncated file reads as such a configuration, valid, and would answer 404 to every request.
 */
export const removesEverything = (serving: GatewayConfig, next: GatewayConfig): string | undefined => {
  const before = definedCounts(serving)
  const after = definedCounts(next)
  if (after.functions + after.models > 0 || before.functions + before.models === 0) return undefined
  return `the reloaded configuration defines no functions and no models, while the one serving defines ${plural(before.functions, "function")} and ${
    plural(before.models, "model")
  }: an empty or truncated file? Refused unless forced (POST /internal/config/reload?force=true)`
}

export class ConfigReload extends Context.Service<ConfigReload, {
  /** the configuration serving new requests */
  readonly current: () => ConfigVersion
  /** loads the files again; one reload at a time (a second waits for the first) */
  readonly reload: (trigger: string, options?: ReloadOptions) => Effect.Effect<ReloadOutcome>
}>()("gateway/ConfigReload") {}
