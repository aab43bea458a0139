// The start-up bundle: bin/gateway.ts and everything it imports (the dependencies too) in one
// ES module, dist/bin/gateway.mjs, which `npm start` runs (through bin/start.mjs) when it is
// current. One file spares Node resolving and reading ~1,500 modules and stripping the types
// of ours at every start (about half of the start-up time).
// Run by `npm install` (the `prepare` script) and by bin/start.mjs when the sources changed
// since; `node scripts/bundle.ts` builds it by hand.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

// Two folders below the root, as the modules that find files from `import.meta.url`
// (layers/*/migrator.ts: ../../migrations) are. MiniJinja's glue and its WebAssembly file are
// loaded at run time from node_modules by `require.resolve` (src/inference/templates.ts), not bundled.
export const bundleFile = path.join(root, "dist/bin/gateway.mjs")

/** Builds the bundle; false (with the reason on stderr) when esbuild is not installed (a production install) or the build fails. */
export const bundle = async (): Promise<boolean> => {
  let esbuild: typeof import("esbuild")
  try {
    esbuild = await import("esbuild")
  } catch {
    console.error("gateway: esbuild is not installed (a production install?): no start-up bundle, `npm start` runs the sources")
    return false
  }
  // written next to its final name and renamed, so that a start reading it meanwhile never sees half a file
  const partial = `${bundleFile}.${process.pid}.tmp`
  try {
    await esbuild.build({
      entryPoints: [path.join(root, "bin/gateway.ts")],
      outfile: partial,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node24",
      logLevel: "silent",
      // 7 MB rather than 9.5 (read, decoded and kept in memory at every start: -40 ms of CPU, -13 MB
      // of RSS); names are kept, so that stack traces still name the functions
      minifyWhitespace: true,
      minifySyntax: true,
      legalComments: "none",
      // PGlite finds its WebAssembly and data files beside its own modules: loaded from node_modules at run time
      external: ["@electric-sql/*"],
      // the dependencies written as CommonJS call `require`, which an ES module does not have
      banner: { js: `import { createRequire as createRequireForBundle } from "node:module"; const require = createRequireForBundle(import.meta.url);` }
    })
    fs.renameSync(partial, bundleFile)
    return true
  } catch (error) {
    fs.rmSync(partial, { force: true })
    const reason = (error instanceof Error ? error.message : String(error)).split("\n").at(-1)
    console.error(`gateway: the start-up bundle could not be built (${reason}): \`npm start\` runs the sources`)
    return false
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundle()
