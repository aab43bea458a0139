/**
 * Merges the TOML documents matched by `--config-file` into one tree. A key defined in two
 * files is an error naming both; every node remembers the file that defined it, so later
 * errors can name the file and relative paths can resolve against that file's folder.
 */
import { parse as parseToml } from "smol-toml"

export interface ConfigSource {
  readonly path: string
  readonly text: string
}

export type KeyPath = ReadonlyArray<string | number>

export interface ConfigIssue {
  readonly file?: string | undefined
  readonly path: KeyPath
  readonly message: string
}

export interface MergedConfig {
  readonly value: Record<string, unknown>
  /** the file that defined the deepest known prefix of `path` */
  readonly fileOf: (path: KeyPath) => string | undefined
}

const bareKey = /^[A-Za-z0-9_-]+$/

/** `functions.my_fn.variants."v.1"`, `rate_limiting.rules[0]` */
export const formatKeyPath = (path: KeyPath): string => {
  let out = ""
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`
    else out += (out === "" ? "" : ".") + (bareKey.test(key) ? key : JSON.stringify(key))
  }
  return out
}

export const formatIssue = (issue: ConfigIssue): string => {
  const where = issue.path.length === 0 ? "" : `${formatKeyPath(issue.path)}: `
  return `${issue.file === undefined ? "" : `${issue.file}: `}${where}${issue.message}`
}

// smol-toml builds its tables with a null prototype
export const isTable = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== "object" || value === null) return false
  const prototype = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

const originKey = (path: KeyPath): string => path.join("\u0000")

export const mergeConfigSources = (
  sources: ReadonlyArray<ConfigSource>
): { readonly merged: MergedConfig; readonly issues: ReadonlyArray<ConfigIssue> } => {
  const origins = new Map<string, string>()
  const issues: Array<ConfigIssue> = []
  const root: Record<string, unknown> = {}

  const mergeInto = (target: Record<string, unknown>, source: Record<string, unknown>, path: Array<string>, file: string) => {
    for (const [key, value] of Object.entries(source)) {
      const childPath = [...path, key]
      const existing = target[key]
      if (existing === undefined) {
        target[key] = isTable(value) ? {} : value
        origins.set(originKey(childPath), file)
        if (isTable(value)) mergeInto(target[key] as Record<string, unknown>, value, childPath, file)
      } else if (isTable(existing) && isTable(value)) {
        mergeInto(existing, value, childPath, file)
      } else {
        const other = origins.get(originKey(childPath))
        issues.push({
          file,
          path: childPath,
          message: `defined twice: in ${other} and in ${file}`
        })
      }
    }
  }

  for (const source of sources) {
    let document: Record<string, unknown>
    try {
      document = parseToml(source.text) as Record<string, unknown>
    } catch (error) {
      const message = error instanceof Error ? error.message.split("\n")[0] : String(error)
      issues.push({ file: source.path, path: [], message: `invalid TOML: ${message}` })
      continue
    }
    mergeInto(root, document, [], source.path)
  }

  const fileOf = (path: KeyPath): string | undefined => {
    for (let length = path.length; length > 0; length--) {
      const file = origins.get(originKey(path.slice(0, length)))
      if (file !== undefined) return file
    }
    return sources.length === 1 ? sources[0].path : undefined
  }
  return { merged: { value: root, fileOf }, issues }
}
