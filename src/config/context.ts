/**
 * What the section builders of `buildConfig` share: the merged tree, the problems and
 * warnings found so far (each naming its file and TOML key path), and the checks several
 * sections make (decoding a table, reading a JSON Schema file, extra_body pointers and
 * extra_headers). Every problem is collected rather than thrown, so an operator can fix a
 * configuration in one pass.
 */
import type * as Schema from "effect/Schema"
import type { BuiltinFunction } from "./types.ts"
import { type Decoded, makeDecoder, makeLenientDecoder, unknownField } from "../decode.ts"
import { type ExtraHeaderEdit, extraHeaderProblem, isManagedHeader, parsePointer } from "../inference/extraBody.ts"
import { compileJsonSchema, type JsonSchemaValidator } from "../jsonSchema.ts"
import { type ConfigIssue, type ConfigSource, formatIssue, type KeyPath, type MergedConfig } from "./merge.ts"
import { folderOf, resolvePath } from "./paths.ts"

export interface ConfigInput {
  /**
   * the TOML files, in the order their glob matched them; empty for `--default-config`.
   * Relative paths written in a file resolve against that file's folder, so give absolute paths.
   */
  readonly sources: ReadonlyArray<ConfigSource>
  /** reads a template or schema file; undefined when it does not exist */
  readonly readFile: (path: string) => string | undefined
  /**
   * the path with every symbolic link resolved (undefined when it does not exist), so that a
   * link cannot take an included template out of its folder; without it (files held in
   * memory) paths are taken as written
   */
  readonly realPath?: (path: string) => string | undefined
  readonly env: Readonly<Record<string, string | undefined>>
  /**
   * functions every configuration has besides its own (GEPA's analyst and mutator), made anew
   * for each configuration: passed in by the shell so that configuration imports no feature
   */
  readonly builtins?: (() => ReadonlyArray<BuiltinFunction>) | undefined
}

/**
 * A table's decoders: the strict one reports unknown keys; when those are its only problems,
 * the lenient one lets validation go on below the table, so a typo does not hide the rest.
 */
export interface TableDecoder<A> {
  readonly strict: (input: unknown) => Decoded<A>
  readonly lenient: (input: unknown) => Decoded<A>
}

export const tableDecoder = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S): TableDecoder<S["Type"]> => ({
  strict: makeDecoder(schema),
  lenient: makeLenientDecoder(schema)
})

export interface BuildContext {
  readonly input: ConfigInput
  readonly merged: MergedConfig
  /** a problem: the configuration will not load */
  readonly report: (keyPath: KeyPath, message: string) => void
  /** a warning: the configuration loads, and the operator is told (a deprecated key, a setting not enforced) */
  readonly warn: (keyPath: KeyPath, message: string) => void
  /** a problem found outside the tree (a template that does not compile), already located */
  readonly reportAt: (origin: string, message: string) => void
  readonly hasProblems: () => boolean
  readonly problems: () => ReadonlyArray<string>
  readonly warnings: () => ReadonlyArray<string>
  /** decodes `value` found at `keyPath`, reporting each problem under that path */
  readonly decodeAt: <A>(decoder: TableDecoder<A>, value: unknown, keyPath: KeyPath) => A | undefined
  /** a path written in the file that defines `keyPath`, resolved against that file's folder */
  readonly resolvePath: (keyPath: KeyPath, relative: string) => string
  /** the folder of the file that defines `keyPath` (undefined without a file: `--default-config`) */
  readonly folderOfKey: (keyPath: KeyPath) => string | undefined
  /** reads and compiles the JSON Schema file named at `keyPath` */
  readonly readJsonSchema: (keyPath: KeyPath, relative: string) => JsonSchemaValidator | undefined
  /** pointers of configured extra_body edits are checked now rather than failing every call later */
  readonly checkPointers: (keyPath: KeyPath, edits: ReadonlyArray<{ readonly pointer: string }> | undefined) => void
  /** configured extra_headers must be sendable, as a request's must (same check) */
  /**
   * The `extra_headers` entries at `keyPath` to keep: each problem reported, except an entry for
   * a header the HTTP client sets itself (`Content-Length`...), which TensorZero's
   * configurations may carry: dropped with a warning, so that such a configuration loads.
   */
  readonly checkHeaders: (keyPath: KeyPath, edits: ReadonlyArray<ExtraHeaderEdit> | undefined) => ReadonlyArray<ExtraHeaderEdit> | undefined
  /** `timeouts` as written at `keyPath`, with a warning for what the gateway accepts but does not enforce */
}

export const makeBuildContext = (
  input: ConfigInput,
  merged: MergedConfig,
  initialIssues: ReadonlyArray<ConfigIssue>
): BuildContext => {
  const issues: Array<ConfigIssue> = [...initialIssues]
  const warnings: Array<ConfigIssue> = []
  const report = (keyPath: KeyPath, message: string) => issues.push({ file: merged.fileOf(keyPath), path: keyPath, message })
  const folderOfKey = (keyPath: KeyPath) => {
    const file = merged.fileOf(keyPath)
    return file === undefined ? undefined : folderOf(file)
  }
  const resolveAt = (keyPath: KeyPath, relative: string) => resolvePath(folderOfKey(keyPath), relative)

  return {
    input,
    merged,
    report,
    warn: (keyPath, message) => warnings.push({ file: merged.fileOf(keyPath), path: keyPath, message }),
    reportAt: (origin, message) => issues.push({ path: [], message: `${origin}: ${message}` }),
    hasProblems: () => issues.length > 0,
    problems: () => issues.map(formatIssue),
    warnings: () => warnings.map(formatIssue),
    decodeAt: (decoder, value, keyPath) => {
      const result = decoder.strict(value)
      if (result.ok) return result.value
      for (const issue of result.issues) report([...keyPath, ...issue.path], issue.message)
      if (!result.issues.every((issue) => issue.message === unknownField)) return undefined
      const lenient = decoder.lenient(value)
      return lenient.ok ? lenient.value : undefined
    },
    resolvePath: resolveAt,
    folderOfKey,
    readJsonSchema: (keyPath, relative) => {
      const absolute = resolveAt(keyPath, relative)
      const text = input.readFile(absolute)
      if (text === undefined) {
        report(keyPath, `schema file not found: ${absolute}`)
        return undefined
      }
      let json: unknown
      try {
        json = JSON.parse(text)
      } catch (error) {
        report(keyPath, `schema file ${absolute} is not valid JSON: ${(error as Error).message}`)
        return undefined
      }
      const compiled = compileJsonSchema(json)
      if ("error" in compiled) {
        report(keyPath, `invalid JSON Schema in ${absolute}: ${compiled.error}`)
        return undefined
      }
      return compiled.validator
    },
    checkPointers: (keyPath, edits) =>
      edits?.forEach((edit, index) => {
        const tokens = parsePointer(edit.pointer)
        if (tokens === undefined || tokens.length === 0) {
          report([...keyPath, index, "pointer"], `"${edit.pointer}" is not a JSON Pointer to a field (it must start with "/")`)
        }
      }),
    checkHeaders: (keyPath, edits) =>
      edits?.filter((edit, index) => {
        if (isManagedHeader(edit.name)) {
          warnings.push({
            file: merged.fileOf(keyPath),
            path: [...keyPath, index, "name"],
            message: `"${edit.name}" is set by the gateway's HTTP client: this entry is ignored`
          })
          return false
        }
        const problem = extraHeaderProblem(edit.name, "value" in edit ? edit.value : undefined)
        if (problem !== undefined) report([...keyPath, index, problem.field], problem.message)
        return true
      }),
  }
}
