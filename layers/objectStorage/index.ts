/** `[object_storage]` -> the ObjectStorage service of its kind; none without the section (files stay inline). */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { ObjectStorageSettings } from "../../src/config/types.ts"
import { ObjectStorage, ObjectStorageFailure } from "../../src/objectStorage/storage.ts"
import { filesystemStore } from "./filesystem.ts"
import { s3Store } from "./s3.ts"

/** `disabled`: nothing is written or read (the stored input says the file was not kept) */
const disabledStore = () => {
  const refused = Effect.fail(new ObjectStorageFailure("object storage is disabled"))
  return ObjectStorage.of({ kind: { type: "disabled" }, put: () => refused, get: () => refused })
}

export const ObjectStorageLive = (settings: ObjectStorageSettings | undefined): Layer.Layer<never> | Layer.Layer<ObjectStorage> => {
  if (settings === undefined) return Layer.empty
  switch (settings.kind.type) {
    case "filesystem":
      return Layer.succeed(ObjectStorage, filesystemStore(settings.kind.path))
    case "s3_compatible":
      return Layer.effect(ObjectStorage, s3Store(settings))
    case "disabled":
      return Layer.succeed(ObjectStorage, disabledStore())
  }
}
