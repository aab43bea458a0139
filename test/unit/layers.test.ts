/**
 * The layer check of `npm test` (.dependency-cruiser.cjs, run on the real tree by
 * scripts/test.sh) must fail where it should: run here on small trees of the same shape, it
 * reports an import from a higher layer, a cycle made only of type imports, a module no
 * layer claims and a capability's store reached from src/analytics/, and accepts a tree that
 * keeps the ladder.
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { cruise, type ICruiseResult } from "dependency-cruiser"
import { afterEach, describe, expect, it } from "vitest"

const require = createRequire(import.meta.url)
const { forbidden } = require("../../.dependency-cruiser.cjs") as { forbidden: ReadonlyArray<unknown> }

const folders: Array<string> = []
afterEach(() => {
  for (const folder of folders.splice(0)) fs.rmSync(folder, { recursive: true, force: true })
})

/** the violations found in a tree of `files` (path -> text), as "rule: from -> to" */
const violations = async (files: Record<string, string>): Promise<ReadonlyArray<string>> => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "layers-"))
  folders.push(root)
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.join(root, path.dirname(file)), { recursive: true })
    fs.writeFileSync(path.join(root, file), text)
  }
  const { output } = await cruise(["src"], {
    baseDir: root,
    validate: true,
    ruleSet: { forbidden } as never,
    tsPreCompilationDeps: true
  })
  const result = output as ICruiseResult
  return result.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`)
}

describe("the layer check", () => {
  it("accepts imports that go down the ladder", async () => {
    expect(await violations({
      "src/errors.ts": "export const fail = 1\n",
      "src/inference/types.ts": "import { fail } from \"../errors.ts\"\nexport type Block = { a: typeof fail }\n",
      "src/inference/prepare.ts": "import type { Block } from \"./types.ts\"\nexport const prepare = (b: Block) => b\n",
      "src/datasets/service.ts": "import { prepare } from \"../inference/prepare.ts\"\nexport const run = prepare\n"
    })).toEqual([])
  })

  it("names the edge of an import from a higher layer: the configuration reaching the engine", async () => {
    expect(await violations({
      "src/inference/prepare.ts": "export const prepare = 1\n",
      "src/config/build.ts": "import { prepare } from \"../inference/prepare.ts\"\nexport const build = prepare\n"
    })).toEqual(["layer-config: src/config/build.ts -> src/inference/prepare.ts"])
  })

  it("counts a cycle made only of type imports", async () => {
    expect(await violations({
      "src/providers/codec.ts": "import type { Failure } from \"./types.ts\"\nexport type Codec = { f: Failure }\n",
      "src/providers/types.ts": "import type { Codec } from \"./codec.ts\"\nexport type Failure = { c: Codec }\n"
    })).toEqual(["no-circular: src/providers/codec.ts -> src/providers/types.ts"])
  })

  it("keeps the analytics database's base from knowing a capability's store", async () => {
    expect(await violations({
      "src/analytics/stores.ts": "export interface AnalyticsStore { readonly backend: string }\n",
      "src/feedback/store.ts": "import type { AnalyticsStore } from \"../analytics/stores.ts\"\nexport interface FeedbackStore extends AnalyticsStore {}\n",
      "src/analytics/all.ts": "import type { FeedbackStore } from \"../feedback/store.ts\"\nexport interface All { readonly feedback: FeedbackStore }\n"
    })).toEqual(["analytics-knows-no-capability: src/analytics/all.ts -> src/feedback/store.ts"])
  })

  it("refuses a module of a folder no layer claims", async () => {
    expect(await violations({
      "src/errors.ts": "export const fail = 1\n",
      "src/newThing/index.ts": "import { fail } from \"../errors.ts\"\nexport const x = fail\n"
    })).toEqual(["layer-unassigned: src/newThing/index.ts -> src/errors.ts"])
  })
})
