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
/** the embedded database's thread (layers/embedded/pgliteWorker.ts), beside the bundle that starts it */
const workerBundleFile = path.join(root, "dist/bin/pgliteWorker.mjs")

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
  const workerPartial = `${workerBundleFile}.${process.pid}.tmp`
  try {
    // the thread's module first: a bundle in place always has its thread's beside it. JavaScript,
    // so that the thread does not load Node's type stripper (~35 ms of CPU at each start)
    await esbuild.build({
      entryPoints: [path.join(root, "layers/embedded/pgliteWorker.ts")],
      outfile: workerPartial,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node24",
      logLevel: "silent",
      legalComments: "none",
      external: ["@electric-sql/*"]
    })
    fs.renameSync(workerPartial, workerBundleFile)
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
      // PGlite finds its WebAssembly and data files beside its own modules: loaded from node_modules at run time;
      // the AWS S3 SDK is imported only when `[object_storage]` is an S3 bucket: left out, loaded from node_modules then
      external: ["@electric-sql/*", "@aws-sdk/client-s3"],
      // the dependencies written as CommonJS call `require`, which an ES module does not have
      banner: { js: `import { createRequire as createRequireForBundle } from "node:module"; const require = createRequireForBundle(import.meta.url);` }
    })
    fs.renameSync(partial, bundleFile)
    return true
  } catch (error) {
    fs.rmSync(partial, { force: true })
    fs.rmSync(workerPartial, { force: true })
    const reason = (error instanceof Error ? error.message : String(error)).split("\n").at(-1)
    console.error(`gateway: the start-up bundle could not be built (${reason}): \`npm start\` runs the sources`)
    return false
  }
}

export const uiOutput = path.join(root, "dist/ui")

const newestUnder = (dir: string): number =>
  fs.readdirSync(dir, { withFileTypes: true }).reduce((newest, entry) => {
    const file = path.join(dir, entry.name)
    return Math.max(newest, entry.isDirectory() ? newestUnder(file) : fs.statSync(file).mtimeMs)
  }, 0)

/** whether dist/ui was built after the last edit of ui/ */
export const uiIsCurrent = (): boolean => {
  const built = fs.statSync(path.join(uiOutput, "index.html"), { throwIfNoEntry: false })?.mtimeMs ?? 0
  return built > Math.max(newestUnder(path.join(root, "ui/src")), fs.statSync(path.join(root, "ui/index.html")).mtimeMs)
}

/**
 * Builds the web UI (ui/, a Vite project) into dist/ui, which the gateway serves at /ui; false
 * (with the reason on stderr) when Vite is not installed (a production install) or the build fails.
 */
export const buildUi = async (): Promise<boolean> => {
  let vite: typeof import("vite")
  try {
    vite = await import("vite")
  } catch {
    console.error("gateway: vite is not installed (a production install?): no web UI")
    return false
  }
  // React's production build and JSX, whatever NODE_ENV the build runs under (vitest sets "test",
  // which Vite and the React plugin would follow into a development build: 200 kB more, and slower)
  const nodeEnv = process.env.NODE_ENV
  process.env.NODE_ENV = "production"
  try {
    await vite.build({ root: path.join(root, "ui"), configFile: path.join(root, "ui/vite.config.ts"), logLevel: "warn", mode: "production" })
    return true
  } catch (error) {
    console.error(`gateway: the web UI could not be built: ${error instanceof Error ? error.message : String(error)}`)
    return false
  } finally {
    if (nodeEnv === undefined) delete process.env.NODE_ENV
    else process.env.NODE_ENV = nodeEnv
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // both, at once: a failure of one does not stop the other
  await Promise.all([bundle(), buildUi()])
}
