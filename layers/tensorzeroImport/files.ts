/**
 * `--copy-files`: the input files TensorZero kept in object storage, copied into this gateway's
 * own (`[object_storage]` of the configuration), each at the same key, and the stored input's
 * `storage_path` pointed there. TensorZero's store is the one each pointer names (a folder, or an
 * S3-compatible bucket reached with the same `S3_ACCESS_KEY_ID`/`S3_SECRET_ACCESS_KEY`). A file
 * already in this gateway's store is left as it is.
 */
import * as Effect from "effect/Effect"
import type { StorageKind } from "../../src/api/inference.ts"
import type { ObjectStorageSettings } from "../../src/config/types.ts"
import { ObjectStorageFailure, type ObjectStore } from "../../src/objectStorage/storage.ts"
import { filesystemStore } from "../objectStorage/filesystem.ts"
import { s3Store } from "../objectStorage/s3.ts"

export interface FileCopier {
  /** `input` with its files in this gateway's store; fails naming a file TensorZero's store does not hold */
  readonly copyInput: (input: unknown) => Effect.Effect<unknown, ObjectStorageFailure>
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

const isStoredFile = (block: unknown): block is { readonly storage_path: { readonly kind: StorageKind; readonly path: string }; readonly mime_type?: string } =>
  isObject(block) && block.type === "file" && block.file_type === "object_storage" && isObject(block.storage_path) && isObject(block.storage_path.kind)

export const makeFileCopier = (destination: ObjectStore, settings: ObjectStorageSettings): FileCopier => {
  const ours = JSON.stringify(destination.kind)
  /** TensorZero's stores, by the kind their pointers name */
  const sources = new Map<string, Effect.Effect<ObjectStore, ObjectStorageFailure>>()
  const sourceOf = (kind: StorageKind): Effect.Effect<ObjectStore, ObjectStorageFailure> => {
    const key = JSON.stringify(kind)
    let store = sources.get(key)
    if (store === undefined) {
      store = kind.type === "filesystem"
        ? Effect.succeed(filesystemStore(kind.path))
        : kind.type === "s3_compatible"
        ? Effect.cached(s3Store({ kind, s3Credentials: settings.s3Credentials })).pipe(Effect.runSync)
        : Effect.fail(new ObjectStorageFailure(`a file of a ${kind.type} storage cannot be read`))
      sources.set(key, store)
    }
    return store
  }

  const copyBlock = (block: unknown): Effect.Effect<unknown, ObjectStorageFailure> => {
    if (!isStoredFile(block) || JSON.stringify(block.storage_path.kind) === ours) return Effect.succeed(block)
    const { kind, path } = block.storage_path
    return Effect.gen(function*() {
      const source = yield* sourceOf(kind)
      const bytes = yield* source.get(path)
      if (bytes === undefined) return yield* Effect.fail(new ObjectStorageFailure(`${path} is not in TensorZero's storage (${kind.type})`))
      yield* destination.put(path, bytes, block.mime_type ?? "application/octet-stream")
      return { ...block, storage_path: { kind: destination.kind, path } }
    })
  }

  return {
    copyInput: (input) => {
      if (!isObject(input) || !Array.isArray(input.messages)) return Effect.succeed(input)
      return Effect.map(
        Effect.forEach(input.messages, (message) =>
          isObject(message) && Array.isArray(message.content)
            ? Effect.map(Effect.forEach(message.content, copyBlock), (content) => ({ ...message, content }))
            : Effect.succeed(message)),
        (messages) => ({ ...input, messages })
      )
    }
  }
}
