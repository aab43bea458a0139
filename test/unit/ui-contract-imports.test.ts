/**
 * The UI shares the server's contract by its types: every import of `src/` from `ui/` is a type
 * import (erased at build), or of a module that imports nothing (plain constants). A value
 * import of a schema module would put the schema library in the page's bundle (100 kB).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { repoRoot } from "../support/gateway.ts"

const filesUnder = (folder: string): Array<string> =>
  fs.readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(path.join(folder, entry.name)) : /\.tsx?$/.test(entry.name) ? [path.join(folder, entry.name)] : []
  )

describe("the UI's imports of the server's code", () => {
  it("are type imports, or of modules of plain constants", () => {
    const offending: Array<string> = []
    let typeImports = 0
    for (const file of filesUnder(path.join(repoRoot, "ui/src"))) {
      const text = fs.readFileSync(file, "utf8")
      // an import statement ends at its first quote: the module's name
      for (const match of text.matchAll(/^import (type )?[^"]*? from "([^"]*\/src\/[^"]+)"/gm)) {
        if (match[1] !== undefined) {
          typeImports++
          continue
        }
        const imported = fs.readFileSync(path.resolve(path.dirname(file), match[2]), "utf8")
        if (/^import /m.test(imported)) offending.push(`${path.relative(repoRoot, file)}: ${match[2]}`)
      }
    }
    expect(offending).toEqual([])
    expect(typeImports).toBeGreaterThan(20)
  })
})
