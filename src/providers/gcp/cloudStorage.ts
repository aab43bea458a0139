/**
 * Cloud Storage through its JSON API (cloud.google.com/storage/docs/json_api), as batch hooks
 * need it: upload a file (`uploadType=media`), list a folder's objects, download one
 * (`alt=media`, a line at a time). Each call is a `BatchExchange` (or `BatchDownload`), so it carries the provider's access token
 * (the cloud-platform scope covers Cloud Storage) and its failures are mapped like any other.
 * Bucket and object names (some from a provider's answer) are encoded as one path segment
 * each, and every URL checked to stay under the storage API's address (`../urls.ts`).
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { type BatchDownload, type BatchExchange, TextBody } from "../codec.ts"
import { ProviderFailure } from "../failure.ts"
import { gcsBucket, nameProblem, urlUnder } from "../urls.ts"

export const defaultStorageApiBase = "https://storage.googleapis.com/"

/** A `gs://<bucket>/<path>` location: its bucket and the object name (or name prefix) inside it. */
export interface StorageLocation {
  readonly bucket: string
  readonly name: string
}

const gsUri = /^gs:\/\/([^/]+)(?:\/(.*))?$/

export const parseGsUri = (uri: string): StorageLocation | undefined => {
  const match = gsUri.exec(uri)
  return match === null ? undefined : { bucket: match[1], name: match[2] ?? "" }
}

export const gsUriOf = (location: StorageLocation): string => `gs://${location.bucket}/${location.name}`

/** a folder-like prefix: what is written under `path` goes to `path/...` ("" stays the bucket's root) */
export const asFolder = (name: string): string => (name === "" || name.endsWith("/") ? name : `${name}/`)

/** the URL of `segments` (bucket and object names among them, encoded here) under the storage API's address, checked */
const storageUrl = (base: string, segments: ReadonlyArray<string>, query: string): Effect.Effect<string, ProviderFailure> => {
  const url = urlUnder(base, segments.map(encodeURIComponent), query)
  return Result.isFailure(url)
    ? Effect.fail(new ProviderFailure({ message: `Cloud Storage: ${url.failure.message}`, timedOut: false }))
    : Effect.succeed(url.success)
}

/** Why `bucket` cannot be a Cloud Storage bucket (a name from a provider's answer included), or undefined. */
export const bucketProblem = (bucket: string): string | undefined => nameProblem("the bucket", bucket, gcsBucket)

const readJson = (text: string, what: string): Effect.Effect<Record<string, any>, ProviderFailure> => {
  try {
    const json: unknown = JSON.parse(text)
    if (typeof json === "object" && json !== null) return Effect.succeed(json as Record<string, any>)
  } catch {
    // below
  }
  return Effect.fail(new ProviderFailure({ message: `Cloud Storage answered ${what} with a body that is not a JSON object`, timedOut: false }))
}

export const uploadObject = (
  exchange: BatchExchange,
  base: string,
  location: StorageLocation,
  contentType: string,
  text: string
): Effect.Effect<void, ProviderFailure> =>
  storageUrl(base, ["upload", "storage", "v1", "b", location.bucket, "o"], `?uploadType=media&name=${encodeURIComponent(location.name)}`).pipe(
    Effect.flatMap((url) => exchange({ method: "POST", url, body: new TextBody(contentType, text) })),
    Effect.asVoid
  )

/** the names of the objects whose name starts with `prefix`, every page of them */
export const listObjects = (
  exchange: BatchExchange,
  base: string,
  bucket: string,
  prefix: string
): Effect.Effect<ReadonlyArray<string>, ProviderFailure> =>
  Effect.gen(function*() {
    const names: Array<string> = []
    let pageToken: string | undefined
    do {
      const query = `?prefix=${encodeURIComponent(prefix)}${pageToken === undefined ? "" : `&pageToken=${encodeURIComponent(pageToken)}`}`
      const url = yield* storageUrl(base, ["storage", "v1", "b", bucket, "o"], query)
      const page = yield* Effect.flatMap(exchange({ method: "GET", url }), (text) => readJson(text, "a listing"))
      for (const item of Array.isArray(page.items) ? page.items : []) if (typeof item?.name === "string") names.push(item.name)
      pageToken = typeof page.nextPageToken === "string" && page.nextPageToken !== "" ? page.nextPageToken : undefined
    } while (pageToken !== undefined)
    return names
  })

/** the object read a line at a time as it arrives (`BatchDownload`), never held whole */
export const downloadObjectLines = (
  download: BatchDownload,
  base: string,
  location: StorageLocation,
  maxResponseBytes: number,
  each: Parameters<BatchDownload>[1]
): Effect.Effect<void, ProviderFailure> =>
  Effect.flatMap(
    storageUrl(base, ["storage", "v1", "b", location.bucket, "o", location.name], "?alt=media"),
    (url) => download({ method: "GET", url, maxResponseBytes }, each)
  )
