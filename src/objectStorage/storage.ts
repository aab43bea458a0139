/**
 * The object storage port: where input files are written and read back (`[object_storage]`).
 * The shell implements it per storage kind (layers/objectStorage/); the service is absent when
 * the configuration has no `[object_storage]`, and files then stay inline in the stored input.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { StorageKind } from "../api/inference.ts"

/** a read or write the storage failed (the folder unwritable, the S3 server down or refusing) */
export class ObjectStorageFailure extends Error {
  readonly _tag = "ObjectStorageFailure"
}

export interface ObjectStore {
  /** the storage as stored inferences name it: what `storage_path.kind` must equal to be read here */
  readonly kind: StorageKind
  /** writes `bytes` at `path` (a key such as `observability/files/<hash>.png`), replacing what was there */
  readonly put: (path: string, bytes: Uint8Array, mimeType: string) => Effect.Effect<void, ObjectStorageFailure>
  /** the bytes at `path`, or undefined when there is no such object */
  readonly get: (path: string) => Effect.Effect<Uint8Array | undefined, ObjectStorageFailure>
}

export class ObjectStorage extends Context.Service<ObjectStorage, ObjectStore>()("gateway/ObjectStorage") {}
