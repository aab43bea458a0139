/**
 * The template files a configuration names, read once at start-up for the template engine:
 * each variant's templates, and the files they `{% include %}` (or import, or extend) when
 * `[gateway] template_filesystem_access` allows it.
 */
import { type TemplateSource, templateReferences } from "../inference/templates.ts"
import type { BuildContext } from "./context.ts"
import type { TemplateFilesystemAccess } from "./gateway.ts"
import { formatIssue, type KeyPath } from "./merge.ts"
import { folderOf, includedNameProblem, isWithin, resolvePath } from "./paths.ts"

export interface TemplateFiles {
  /** reads the template named at `keyPath` into the engine under `key`; false when the file is missing (reported) */
  readonly load: (keyPath: KeyPath, relative: string, key: string) => boolean
  /** reads the text file named at `keyPath` into the engine under `key` as plain text, rendered as written */
  readonly loadLiteral: (keyPath: KeyPath, relative: string, key: string) => boolean
  /** registers a template the gateway ships (a built-in function's), under a reserved key */
  readonly addBuiltin: (key: string, source: string, origin: string) => void
  readonly sources: () => ReadonlyArray<TemplateSource>
}

/**
 * A template that renders to `text` exactly: the text in `{% raw %}` blocks. A raw block ends
 * at the first `{%` that opens `endraw`, so the text is cut at every `{%` (it cannot end a
 * block it is not part of) and each `{%` is printed as a string literal.
 */
export const literalTemplate = (text: string): string =>
  text.split("{%").map((part) => (part === "" ? "" : `{% raw %}${part}{% endraw %}`)).join(`{{ "{%" }}`)

export const makeTemplateFiles = (context: BuildContext, access: TemplateFilesystemAccess): TemplateFiles => {
  const sources: Array<TemplateSource> = []

  /** registers the files a template includes or imports, when filesystem access allows it */
  const addReferenced = (keyPath: KeyPath, from: string, source: string) => {
    for (const reference of templateReferences(source)) {
      if (sources.some((template) => template.key === reference)) continue
      if (!access.enabled) {
        context.report(keyPath, `template ${from} loads "${reference}", which needs gateway.template_filesystem_access.base_path (or template_filesystem_access = true)`)
        continue
      }
      const folder = access.folder ?? context.folderOfKey(keyPath) ?? folderOf(from)
      // the folder is a boundary: names and links that lead out of it are refused
      const problem = includedNameProblem(reference)
      if (problem !== undefined) {
        context.report(keyPath, `template ${from} loads "${reference}": ${problem}; included templates are named by a path below ${folder}`)
        continue
      }
      const path = resolvePath(folder, reference)
      const real = context.input.realPath?.(path)
      const realFolder = context.input.realPath?.(folder) ?? folder
      if (real !== undefined && !isWithin(real, realFolder)) {
        context.report(keyPath, `template ${from} loads "${reference}", which resolves through a link to ${real}, outside ${folder}: refused`)
        continue
      }
      // the path checked is the one read
      const referenced = context.input.readFile(real ?? path)
      if (referenced === undefined) {
        context.report(keyPath, `template ${from} loads "${reference}", but ${path} does not exist`)
        continue
      }
      sources.push({ key: reference, source: referenced, origin: path })
      addReferenced(keyPath, path, referenced)
    }
  }

  /** the file's text, or undefined when it is missing (reported) */
  const read = (keyPath: KeyPath, relative: string, what: string) => {
    const path = context.resolvePath(keyPath, relative)
    const text = context.input.readFile(path)
    if (text === undefined) context.report(keyPath, `${what} not found: ${path}`)
    return { path, text }
  }
  const originOf = (keyPath: KeyPath, path: string) => formatIssue({ file: context.merged.fileOf(keyPath), path: keyPath, message: path })

  return {
    load: (keyPath, relative, key) => {
      const { path, text: source } = read(keyPath, relative, "template file")
      if (source === undefined) return false
      sources.push({ key, source, origin: originOf(keyPath, path) })
      addReferenced(keyPath, path, source)
      return true
    },
    loadLiteral: (keyPath, relative, key) => {
      const { path, text } = read(keyPath, relative, "file")
      if (text === undefined) return false
      sources.push({ key, source: literalTemplate(text), origin: originOf(keyPath, path) })
      return true
    },
    addBuiltin: (key, source, origin) => {
      sources.push({ key, source, origin })
    },
    sources: () => sources
  }
}
