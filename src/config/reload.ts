/**
 * Loading the configuration again while the gateway runs (`SIGHUP`, `POST
 * /internal/config/reload`, `--watch-config`): requests that start after a successful reload
 * run on the new configuration, those in flight finish on the one they started with. The
 * shell implements it (layers/reload.ts); this is what handlers and `/status` see of it.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"

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

export class ConfigReload extends Context.Service<ConfigReload, {
  /** the configuration serving new requests */
  readonly current: () => ConfigVersion
  /** loads the files again; one reload at a time (a second waits for the first) */
  readonly reload: (trigger: string) => Effect.Effect<ReloadOutcome>
}>()("gateway/ConfigReload") {}
