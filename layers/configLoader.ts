/**
 * Reads the configuration from disk: expands the `--config-file` glob, reads every match,
 * and hands the text to the core's `buildConfig` under absolute paths (so that the paths
 * a file names resolve against its folder), together with a reader for the template and
 * schema files it references. Runs at start-up and at each reload (layers/reload.ts); its
 * warnings are logged then. What it read is hashed: the configuration's version in `/status`.
 */
import { createHash } from "node:crypto"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { buildConfig, type ConfigBuilt } from "../src/config/build.ts"
import type { ConfigSource } from "../src/config/merge.ts"
import type { GatewayConfig } from "../src/config/types.ts"
import { gepaBuiltins } from "../src/optimization/gepa/builtins.ts"

/**
 * A configuration as loaded: the core's answer, the files it was read from (the configuration
 * files and every template and schema they name, for `--watch-config`), and, when valid, the
 * SHA-256 of their paths and contents: two loads of the same files give the same hash.
 */
export type LoadedConfig = ConfigBuilt & { readonly files: ReadonlyArray<string>; readonly hash: string }

/** a configuration that validated, with what it was read from */
export type ValidConfig = Extract<LoadedConfig, { readonly config: GatewayConfig }>

/** `errors` as the problems of a configuration are listed: "1 problem", then each line indented */
export const problemCount = (errors: ReadonlyArray<string>) => `${errors.length} problem${errors.length === 1 ? "" : "s"}`
export const problemLines = (errors: ReadonlyArray<string>) => errors.map((line) => `  ${line}`)

const globCharacters = /[*?[\]{}]/

const readText = (file: string): string | undefined => {
  try {
    return fs.readFileSync(file, "utf8")
  } catch {
    return undefined
  }
}

const realPath = (file: string): string | undefined => {
  try {
    return fs.realpathSync(file)
  } catch {
    return undefined
  }
}

/**
 * For a glob (`config/**\/*.toml`): the absolute pattern, and the folder its matches are under
 * (its segments before the first with a glob character), where a new match can appear;
 * undefined for a plain file name.
 */
export const globRoot = (pattern: string): { readonly folder: string; readonly pattern: string } | undefined => {
  if (!globCharacters.test(pattern)) return undefined
  const absolute = path.resolve(pattern)
  const segments = absolute.split(path.sep)
  const firstGlob = segments.findIndex((segment) => globCharacters.test(segment))
  return { folder: segments.slice(0, firstGlob).join(path.sep) || path.sep, pattern: absolute }
}

/** The files a `--config-file` value names: the file itself, or every match of a glob, sorted. */
export const configFiles = (pattern: string): ReadonlyArray<string> =>
  globCharacters.test(pattern)
    ? fs.globSync(pattern).map((file) => path.resolve(file)).filter((file) => fs.statSync(file).isFile()).sort()
    : [path.resolve(pattern)]

/**
 * Loads and validates the configuration. `pattern` undefined means `--default-config`:
 * no functions or models of its own, only `gateway::default` with short-hand model names.
 */
export const loadConfig = (
  pattern: string | undefined,
  env: Readonly<Record<string, string | undefined>>
): LoadedConfig => {
  const read = new Map<string, string | undefined>()
  const readFile = (file: string) => {
    const text = readText(file)
    read.set(path.resolve(file), text)
    return text
  }
  const loaded = (built: ConfigBuilt): LoadedConfig => {
    const hash = createHash("sha256")
    for (const [file, text] of [...read].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) hash.update(`${file}\0${text ?? ""}\0`)
    return { ...built, files: [...read.keys()], hash: hash.digest("hex") }
  }
  const sources: Array<ConfigSource> = []
  if (pattern !== undefined) {
    const files = configFiles(pattern)
    if (files.length === 0) return loaded({ errors: [`no configuration file matches ${pattern}`] })
    const errors: Array<string> = []
    for (const file of files) {
      const text = readFile(file)
      if (text === undefined) errors.push(`${file}: cannot read the configuration file`)
      else sources.push({ path: file, text })
    }
    if (errors.length > 0) return loaded({ errors })
  }
  return loaded(buildConfig({ sources, readFile, realPath, env, builtins: gepaBuiltins }))
}

/** Logs what the configuration loaded with but should change (a deprecated key, a setting not enforced). */
export const logConfigWarnings = (warnings: ReadonlyArray<string>): Effect.Effect<void> =>
  Effect.forEach(warnings, (warning) => Effect.logWarning(`configuration: ${warning}`), { discard: true })
