// Checks the links of README.md and docs/*.md: every relative link names a file that exists, and
// every `#anchor` (in the same page or another one) a heading of that page, slugged as GitHub
// does. Run by test/unit/docs-links.test.ts; by hand: `node scripts/checkDocsLinks.ts` (exit 1
// and one line per broken link).
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** The pages checked: the README and every page of docs/, relative to the repository's root. */
export const docsPages = (root: string): ReadonlyArray<string> => {
  const docs = path.join(root, "docs")
  const pages = fs.existsSync(docs)
    ? fs.readdirSync(docs).filter((name) => name.endsWith(".md")).sort().map((name) => `docs/${name}`)
    : []
  return ["README.md", ...pages]
}

/** The lines of a page outside fenced code blocks (others become empty, so line numbers hold). */
const proseLines = (text: string): ReadonlyArray<string> => {
  let fence: string | null = null
  return text.split("\n").map((line) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1]
    if (fence === null && marker !== undefined) {
      fence = marker
      return ""
    }
    if (fence !== null) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) fence = null
      return ""
    }
    return line
  })
}

/** A line without its inline code spans (a `[x](y)` inside one is code, not a link). */
const withoutCode = (line: string): string => line.replace(/(`+)[\s\S]*?\1/g, "")

/** GitHub's anchor for a heading's text (github-slugger): lower case, punctuation dropped, spaces as hyphens. */
export const headingSlug = (heading: string): string =>
  heading
    .replace(/`/g, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\*/g, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "")
    .replace(/ /g, "-")

/** The anchors of a page's headings, a repeated one numbered as GitHub numbers it (`x`, `x-1`, ...). */
export const pageAnchors = (text: string): ReadonlySet<string> => {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const line of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1]
    if (heading === undefined) continue
    const slug = headingSlug(heading)
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    anchors.add(count === 0 ? slug : `${slug}-${count}`)
  }
  return anchors
}

/** Every broken link of the pages, as `file:line: [text](target): why`. */
export const checkDocsLinks = (root: string): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const anchorsOf = new Map<string, ReadonlySet<string>>()
  const anchors = (file: string) => {
    let found = anchorsOf.get(file)
    if (found === undefined) {
      found = pageAnchors(fs.readFileSync(file, "utf8"))
      anchorsOf.set(file, found)
    }
    return found
  }
  for (const page of docsPages(root)) {
    const file = path.join(root, page)
    proseLines(fs.readFileSync(file, "utf8")).forEach((line, index) => {
      for (const link of withoutCode(line).matchAll(/\[([^[\]]*)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) {
        const target = link[2]
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue // http:, https:, mailto:
        const problem = (why: string) => problems.push(`${page}:${index + 1}: ${link[0]}: ${why}`)
        const hash = target.indexOf("#")
        const filePart = hash === -1 ? target : target.slice(0, hash)
        const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1))
        const linked = filePart === "" ? file : path.resolve(path.dirname(file), decodeURIComponent(filePart))
        if (!fs.existsSync(linked)) {
          problem(`no file ${path.relative(root, linked)}`)
          continue
        }
        if (anchor === null) continue
        if (!linked.endsWith(".md")) problem("an anchor into a file that is not markdown")
        else if (!anchors(linked).has(anchor)) problem(`no heading #${anchor} in ${path.relative(root, linked)}`)
      }
    })
  }
  return problems
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
  const problems = checkDocsLinks(root)
  for (const problem of problems) console.error(problem)
  console.log(`${docsPages(root).length} pages, ${problems.length} broken links`)
  process.exit(problems.length === 0 ? 0 : 1)
}
