/**
 * The web UI at `<base_path>/ui`: the single-page application `npm install` builds into dist/ui
 * (scripts/bundle.ts, from ui/), served from memory. Files under `assets/` have content hashes in
 * their names and are cached for a year; every other path is the application's page (its router
 * draws the route), never cached without asking again (ETag). Text is sent gzipped when the
 * browser takes it. Nothing on disk is reached by a request's path: only the files read at the
 * first request exist.
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { pageHeaders } from "./pageSecurity.ts"

/** two folders below the root, like dist/bin/gateway.mjs, the bundle this module is part of */
export const uiFolder = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../dist/ui")

const contentTypes: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
  ".txt": "text/plain; charset=utf-8",
  ".woff2": "font/woff2"
}

interface Asset {
  readonly body: Uint8Array
  readonly gzipped: Uint8Array | undefined
  readonly type: string
  readonly etag: string
  readonly immutable: boolean
}

/** What the page may do: its own scripts and styles (uPlot sets inline styles), calls to its own origin only. */
const uiPageHeaders = pageHeaders(
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'"
)

const asset = (body: Uint8Array, type: string, immutable: boolean): Asset => ({
  body,
  // compressing what is worth it, once
  gzipped: body.length > 1024 && !type.startsWith("image/png") && !type.startsWith("font/") ? gzipSync(body, { level: 9 }) : undefined,
  type,
  etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`,
  immutable
})

const filesUnder = (folder: string, prefix = ""): ReadonlyArray<string> =>
  fs.readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(path.join(folder, entry.name), `${prefix}${entry.name}/`) : [`${prefix}${entry.name}`]
  )

/**
 * The built UI as `basePath` serves it, or undefined when it was not built. The page learns where
 * it is served from a `<base>` element, so that one build works under any base path.
 */
export const loadUi = (folder: string, basePath: string): ReadonlyMap<string, Asset> | undefined => {
  if (!fs.existsSync(path.join(folder, "index.html"))) return undefined
  const assets = new Map<string, Asset>()
  for (const file of filesUnder(folder)) {
    const type = contentTypes[path.extname(file)] ?? "application/octet-stream"
    let body: Uint8Array = fs.readFileSync(path.join(folder, file))
    if (file === "index.html") {
      const base = `<base href="${basePath}/ui/">`
      body = Buffer.from(Buffer.from(body).toString("utf8").replace("<head>", `<head>\n    ${base}`))
    }
    assets.set(file, asset(body, type, file.startsWith("assets/")))
  }
  return assets
}

const notBuilt = HttpServerResponse.text(
  "The web UI is not built: `npm install` builds it (or `node scripts/bundle.ts`); a production install (--omit=dev) has no UI.",
  { status: 503 }
)

const respond = (request: HttpServerRequest.HttpServerRequest, file: Asset) => {
  if (!file.immutable && request.headers["if-none-match"] === file.etag) {
    return HttpServerResponse.empty({ status: 304, headers: { etag: file.etag } })
  }
  const gzip = file.gzipped !== undefined && /\bgzip\b/.test(request.headers["accept-encoding"] ?? "")
  return HttpServerResponse.uint8Array(gzip ? file.gzipped! : file.body, {
    contentType: file.type,
    headers: {
      ...(file.type.startsWith("text/html") ? uiPageHeaders : { "x-content-type-options": "nosniff" }),
      "cache-control": file.immutable ? "public, max-age=31536000, immutable" : "no-cache",
      etag: file.etag,
      vary: "accept-encoding",
      ...(gzip ? { "content-encoding": "gzip" } : {})
    }
  })
}

/** the file a URL asks for, relative to the UI's folder ("" for the page itself); undefined when it does not decode */
const pathWithinUi = (url: string): string | undefined => {
  try {
    return decodeURIComponent(url.split("?")[0]).replace(/^.*?\/ui\/?/, "")
  } catch {
    return undefined
  }
}

/** `GET /ui` and `GET /ui/...` (the router adds the base path). */
export const UiAssets = (basePath: string, folder = uiFolder) => {
  let loaded: ReadonlyMap<string, Asset> | undefined
  const serve = (request: HttpServerRequest.HttpServerRequest) =>
    Effect.sync(() => {
      loaded ??= loadUi(folder, basePath)
      if (loaded === undefined) return notBuilt
      const requested = pathWithinUi(request.url)
      if (requested === undefined) return HttpServerResponse.text("malformed path", { status: 400 })
      const file = loaded.get(requested)
      if (file !== undefined) return respond(request, file)
      // a missing asset is a 404, any other path a route of the page
      if (requested.startsWith("assets/")) return HttpServerResponse.text("no such asset", { status: 404 })
      return respond(request, loaded.get("index.html")!)
    })
  // "/ui/*" takes "/ui" too
  return HttpRouter.add("GET", "/ui/*", serve)
}
