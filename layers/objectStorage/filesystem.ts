/**
 * Object storage in a folder (`type = "filesystem"`): each key a file under it. A file is
 * written beside its place and renamed into it, so a reader never sees half a file.
 */
import { mkdir, readFile, rename, writeFile } from "node:fs/promises"
import { dirname, resolve, sep } from "node:path"
import * as Effect from "effect/Effect"
import { ObjectStorageFailure, type ObjectStore } from "../../src/objectStorage/storage.ts"

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

export const filesystemStore = (path: string): ObjectStore => {
  // as TensorZero does: a relative folder is the process's working folder's
  const root = resolve(path)
  /** the file of `key`, which must stay inside the folder */
  const fileOf = (key: string): string | undefined => {
    const file = resolve(root, key)
    return file.startsWith(root + sep) ? file : undefined
  }
  let writes = 0
  return {
    kind: { type: "filesystem", path },
    put: (key, bytes) =>
      Effect.tryPromise({
        try: async () => {
          const file = fileOf(key)
          if (file === undefined) throw new Error(`the key ${key} is outside the folder`)
          await mkdir(dirname(file), { recursive: true })
          const partial = `${file}.${process.pid}.${++writes}.partial`
          await writeFile(partial, bytes)
          await rename(partial, file)
        },
        catch: (error) => new ObjectStorageFailure(`writing ${key} under ${root}: ${messageOf(error)}`)
      }),
    get: (key) =>
      Effect.tryPromise({
        try: async () => {
          const file = fileOf(key)
          if (file === undefined) throw new Error(`the key ${key} is outside the folder`)
          try {
            return new Uint8Array(await readFile(file))
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
            throw error
          }
        },
        catch: (error) => new ObjectStorageFailure(`reading ${key} under ${root}: ${messageOf(error)}`)
      })
  }
}
