/**
 * The template files a configuration names, read once at start-up for the template engine:
 * each variant's templates, and the files they `{% include %}` (or import, or extend) when
 * `[gateway] template_filesystem_access` allows it.
 */
import { type TemplateSource, templateReferences } from "../inference/templates.ts"
import type { BuildContext } from "./context.ts"
import type { TemplateFilesystemAccess } from "./gateway.ts"
import { formatIssue, type KeyPath } from "./merge.ts"
import { folderOf, resolvePath } from "./paths.ts"

export interface TemplateFiles {
  /** reads the template named at `keyPath` into the engine under `key`; false when the file is missing (reported) */
  readonly load: (keyPath: KeyPath, relative: string, key: string) => boolean
  readonly sources: () => ReadonlyArray<TemplateSource>
}

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
      const path = resolvePath(access.folder ?? context.folderOfKey(keyPath) ?? folderOf(from), reference)
      const referenced = context.input.readFile(path)
      if (referenced === undefined) {
        context.report(keyPath, `template ${from} loads "${reference}", but ${path} does not exist`)
        continue
      }
      sources.push({ key: reference, source: referenced, origin: path })
      addReferenced(keyPath, path, referenced)
    }
  }

  return {
    load: (keyPath, relative, key) => {
      const path = context.resolvePath(keyPath, relative)
      const source = context.input.readFile(path)
      if (source === undefined) {
        context.report(keyPath, `template file not found: ${path}`)
        return false
      }
      sources.push({ key, source, origin: formatIssue({ file: context.merged.fileOf(keyPath), path: keyPath, message: path }) })
      addReferenced(keyPath, path, source)
      return true
    },
    sources: () => sources
  }
}
