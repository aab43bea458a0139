import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { checkDocsLinks, headingSlug, pageAnchors } from "../../scripts/checkDocsLinks.ts"

const repoRoot = path.resolve(import.meta.dirname, "../..")

describe("the links of README.md and docs/*.md", () => {
  it("all resolve: every relative file exists and every #anchor is a heading of its page", () => {
    expect(checkDocsLinks(repoRoot)).toEqual([])
  })
})

describe("checkDocsLinks", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "docs-links-"))
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

  it("slugs headings as GitHub does", () => {
    expect(headingSlug("`[models.<name>]`")).toBe("modelsname")
    expect(headingSlug("GET /v1/experimentation/{function_name}")).toBe("get-v1experimentationfunction_name")
    expect(headingSlug("Workflow (dynamic) evaluation runs")).toBe("workflow-dynamic-evaluation-runs")
    expect(headingSlug("TensorZero's flags")).toBe("tensorzeros-flags")
    expect([...pageAnchors("# A\n## A\n```\n# not a heading\n```\n## B")]).toEqual(["a", "a-1", "b"])
  })

  it("names each broken link, and ignores links in code", () => {
    fs.mkdirSync(path.join(root, "docs"))
    fs.writeFileSync(
      path.join(root, "README.md"),
      [
        "# Gateway",
        "[ok](docs/page.md#a-section) [ok](#gateway) [ok](https://example.com/x#y)",
        "[missing file](docs/nope.md) [missing anchor](docs/page.md#nope)",
        "`[in code](docs/nope.md)`",
        "```",
        "[in a block](docs/nope.md)",
        "```"
      ].join("\n")
    )
    fs.writeFileSync(path.join(root, "docs", "page.md"), "# Page\n\n## A section\n\n[back](../README.md#nowhere)\n")
    expect(checkDocsLinks(root)).toEqual([
      "README.md:3: [missing file](docs/nope.md): no file docs/nope.md",
      "README.md:3: [missing anchor](docs/page.md#nope): no heading #nope in docs/page.md",
      "docs/page.md:5: [back](../README.md#nowhere): no heading #nowhere in README.md"
    ])
  })
})
