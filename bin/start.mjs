#!/usr/bin/env node
// The quick way into the `gateway` command (what `npm start` runs; same flags as bin/gateway.ts):
// 1. Node's compile cache on, so that a start after the first reuses the code V8 compiled
//    (and the types stripped) then; it lives in NODE_COMPILE_CACHE if set, else in the
//    system's temporary folder (node-compile-cache/), so that a read-only install has one
//    too; if it cannot be written, Node goes on without it.
// 2. The bundle dist/bin/gateway.mjs (scripts/bundle.ts) when it is newer than every source
//    file and the installed dependencies; when it is older (someone edited src/), it is built
//    again first, and if it cannot be (no esbuild, a read-only install), the sources run.
// 3. The web UI (dist/ui) built again when ui/ is newer than it.
// Plain JavaScript: a .ts file would load Node's type stripper before the cache is on.
import * as fs from "node:fs"
import * as module from "node:module"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

module.enableCompileCache()

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const bundleFile = path.join(root, "dist/bin/gateway.mjs")

/** the newest modification time of the files under `dir` (~400 files: 5 ms, half of `recursive: true`'s) */
const newestUnder = (dir) => {
  let newest = 0
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(file) : fs.statSync(file).mtimeMs)
  }
  return newest
}

const modifiedAt = (file) => fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0

/** whether the bundle holds the current code: built after the last edit of the sources and the last `npm install` */
const bundleIsCurrent = () => {
  const built = modifiedAt(bundleFile)
  if (built === 0) return false
  const sources = ["bin", "src", "layers"].map((dir) => newestUnder(path.join(root, dir)))
  return Math.max(...sources, modifiedAt(path.join(root, "node_modules/.package-lock.json"))) < built
}

// `--quickstart`: the example configuration, and (unless the environment names databases) the
// embedded database in .gateway-data for both, so that a first run stores everything
const quickstart = process.argv.indexOf("--quickstart")
if (quickstart >= 0) {
  process.argv.splice(quickstart, 1, "--config-file", path.join(root, "examples/quickstart/config.toml"))
  if (process.env.GATEWAY_ANALYTICS_DB_URL === undefined && process.env.GATEWAY_RELATIONAL_DB_URL === undefined) {
    process.env.GATEWAY_ANALYTICS_DB_URL = "pglite://.gateway-data"
    process.env.GATEWAY_RELATIONAL_DB_URL = "pglite://.gateway-data"
  }
}

// an API key command run where the quickstart keeps its data (and no database is named) is
// about that data: `npm run gateway -- --create-api-key` beside `npm start`
const keyCommand = process.argv.some((arg) => arg === "--create-api-key" || arg === "--disable-api-key" || arg === "api-key")
if (keyCommand && process.env.GATEWAY_RELATIONAL_DB_URL === undefined && fs.existsSync(".gateway-data/FORMAT")) {
  process.env.GATEWAY_RELATIONAL_DB_URL = "pglite://.gateway-data"
  console.error("gateway: API keys of the embedded database in .gateway-data (set GATEWAY_RELATIONAL_DB_URL to choose another database)")
}

// the web UI, built again when its sources changed since (a developer editing ui/)
const uiBuilt = modifiedAt(path.join(root, "dist/ui/index.html"))
if (fs.existsSync(path.join(root, "ui/src")) && uiBuilt < Math.max(newestUnder(path.join(root, "ui/src")), modifiedAt(path.join(root, "ui/index.html")))) {
  await import("../scripts/bundle.ts").then(({ buildUi }) => buildUi())
}

const entry = bundleIsCurrent() || (await import("../scripts/bundle.ts").then(({ bundle }) => bundle()))
  ? bundleFile
  : path.join(root, "bin/gateway.ts")
await import(pathToFileURL(entry).href)
// every module the start needed is compiled by now: saved at once rather than at exit, which a
// killed process (or a container stopped without a grace period) never reaches
module.flushCompileCache()
