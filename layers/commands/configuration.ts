/**
 * What every command starts from: the configuration its flags name (a file or glob, or the
 * default, empty one), and the environment of a one-shot command.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { loadConfig, problemCount, problemLines, type ValidConfig } from "../configLoader.ts"
import { withEmbeddedDatabases } from "../embedded/pglite.ts"
import type { LogFormat } from "../logging.ts"
import { failWith } from "./exit.ts"

/** the flags every command that reads the configuration takes */
export interface SharedFlags {
  readonly configFile: Option.Option<string>
  readonly configPath: Option.Option<string>
  readonly defaultConfig: boolean
  readonly logFormat: LogFormat
}

/** the environment of a one-shot command: a `pglite://` database opened for it, or reached through the gateway holding it */
export const commandEnv = withEmbeddedDatabases(process.env, { shareRunning: true })

/** the file or glob the flags name; undefined for the default (empty) configuration */
export const configPattern = (flags: SharedFlags) => Option.getOrUndefined(Option.orElse(flags.configFile, () => flags.configPath))

/** The configuration the flags name: a file or glob, or the default (empty) configuration. */
export const configFromFlags = (flags: SharedFlags): Effect.Effect<ValidConfig> => {
  const loaded = loadConfig(configPattern(flags), process.env)
  if ("errors" in loaded) {
    return failWith(1, [`the configuration is invalid (${problemCount(loaded.errors)}):`, ...problemLines(loaded.errors)])
  }
  return Effect.succeed(loaded)
}

export const defaultConfig: Effect.Effect<ValidConfig> = Effect.suspend(() => {
  const loaded = loadConfig(undefined, process.env)
  return "errors" in loaded ? failWith(1, loaded.errors) : Effect.succeed(loaded)
})
