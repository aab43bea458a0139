/**
 * GEPA's results as configuration: each candidate as a variant table (templates inline, as the
 * API answers them), and the files to add to a configuration: one TOML file with the variants,
 * whose templates point to one file each beside it. No I/O.
 */
import { stringify } from "smol-toml"
import type { ChatCompletionVariant } from "../../config/types.ts"
import { inferenceParamNames } from "../../inference/params.ts"
import type { GepaCandidate } from "./candidates.ts"

/**
 * The candidate as a `chat_completion` variant table with `base`'s model and settings and the
 * candidate's templates inline (`templates.<name>.content`); only the fields that are set.
 */
export const gepaVariantJson = (base: ChatCompletionVariant, candidate: GepaCandidate): Record<string, unknown> => {
  const table: Record<string, unknown> = {
    type: "chat_completion",
    model: base.model,
    templates: Object.fromEntries(Object.entries(candidate.templates).map(([name, content]) => [name, { content }])),
    json_mode: base.jsonMode
  }
  for (const param of inferenceParamNames) {
    if (base.params[param] !== undefined) table[param] = base.params[param]
  }
  table.retries = { num_retries: base.retries.numRetries, max_delay_s: base.retries.maxDelayS }
  if (Object.keys(base.timeouts).length > 0) table.timeouts = base.timeouts
  if (base.extraBody.length > 0) table.extra_body = base.extraBody
  if (base.extraHeaders.length > 0) table.extra_headers = base.extraHeaders
  return table
}

/** the configuration file `exportFiles` writes; template paths are relative to it */
export const exportConfigPath = "gateway.toml"

/** a name as one path segment: `::` as `__`, anything but letters, digits, `.`, `_`, `-` as `_`, never `.` or `..` */
const safeSegment = (name: string): string => {
  const safe = name.replaceAll("::", "__").replace(/[^A-Za-z0-9._-]/g, "_")
  return safe.replace(/^\.+$/, (dots) => "_".repeat(dots.length)) || "_"
}

/**
 * The files that add `variants` (name -> `gepaVariantJson` table) to function `functionName`:
 * `gateway.toml` with a `[functions.<fn>.variants.<name>]` table each, whose templates point to
 * `<fn>/<variant>/<template>.minijinja` (names made safe for file systems; distinct names that
 * become the same path get a numbered suffix), and those template files.
 */
export const exportFiles = (
  functionName: string,
  variants: Readonly<Record<string, Record<string, unknown>>>
): Array<{ readonly path: string; readonly content: string }> => {
  const files: Array<{ path: string; content: string }> = []
  // compared without case: case-insensitive file systems
  const taken = new Set<string>()
  const uniquePath = (stem: string): string => {
    let path = `${stem}.minijinja`
    for (let n = 2; taken.has(path.toLowerCase()); n++) path = `${stem}-${n}.minijinja`
    taken.add(path.toLowerCase())
    return path
  }
  const tables: Record<string, Record<string, unknown>> = {}
  for (const [variantName, variant] of Object.entries(variants)) {
    const templates: Record<string, unknown> = {}
    for (const [templateName, entry] of Object.entries((variant.templates ?? {}) as Record<string, unknown>)) {
      const content = (entry as { content?: unknown } | null)?.content
      if (typeof content !== "string") {
        templates[templateName] = entry
        continue
      }
      const path = uniquePath(`${safeSegment(functionName)}/${safeSegment(variantName)}/${safeSegment(templateName)}`)
      files.push({ path, content })
      templates[templateName] = { path }
    }
    tables[variantName] = { ...variant, templates }
  }
  const header = `# Variants of function ${JSON.stringify(functionName)} found by GEPA prompt optimization.\n` +
    "# Template paths are relative to this file. Load it with the rest of the configuration: a --config-file\n" +
    "# glob such as 'config/**/*.toml' merges the files it matches.\n\n"
  const toml = stringify({ functions: { [functionName]: { variants: tables } } })
  return [{ path: exportConfigPath, content: header + toml }, ...files]
}
