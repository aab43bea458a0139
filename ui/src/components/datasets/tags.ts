/** Tags as the forms write them: `key=value`, one per line (the editor) or one pair (the filters). */

export type Parsed<A> = { readonly value: A } | { readonly problem: string }

/** tags as `key=value` lines, in key order */
export const tagsText = (tags: Readonly<Record<string, string>>): string =>
  Object.keys(tags).sort().map((key) => `${key}=${tags[key]}`).join("\n")

/** one `key=value` pair (split at the first `=`, so a value may hold one), or the problem with it */
export const parseTag = (text: string, what: string): Parsed<{ readonly key: string; readonly value: string }> => {
  const at = text.indexOf("=")
  const key = at < 0 ? "" : text.slice(0, at).trim()
  if (key === "") return { problem: `${what}: "${text.trim()}" is not key=value` }
  return { value: { key, value: text.slice(at + 1).trim() } }
}

/** `key=value` lines as tags (blank lines skipped), or the problem with the first bad line */
export const parseTags = (text: string): Parsed<Record<string, string>> => {
  const tags: Record<string, string> = {}
  const lines = text.split("\n")
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() === "") continue
    const tag = parseTag(lines[i], `Tags, line ${i + 1}`)
    if ("problem" in tag) return tag
    if (tag.value.key in tags) return { problem: `Tags, line ${i + 1}: the key "${tag.value.key}" is given twice` }
    tags[tag.value.key] = tag.value.value
  }
  return { value: tags }
}

/** the same tags, whatever their order */
export const sameTags = (a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>) => tagsText(a) === tagsText(b)
