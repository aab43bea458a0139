/**
 * Input files and object storage, in one place: the stored input keeps a base64 file as a
 * `storage_path` to the object written for it (TensorZero's shape), and an input that names a
 * `storage_path` has its file read back for the provider.
 */
import { createHash } from "node:crypto"
import * as Effect from "effect/Effect"
import type { Input, InputBlock, InputMessage, ObjectStorageFileBlock, StorageKind, StoragePath } from "../api/inference.ts"
import { InvalidRequest, ServiceUnavailable } from "../errors.ts"
import type { WriteUnit } from "../analytics/writeQueue.ts"
import type { RequestMessage } from "../inference/types.ts"
import type { ObjectStore } from "./storage.ts"

/** file name extensions by MIME type (TensorZero's are only for people browsing the storage: the MIME type is stored) */
const extensions: Readonly<Record<string, string>> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/webp": "webp",
  "image/gif": "gif",
  "application/pdf": "pdf",
  "audio/wav": "wav",
  "audio/x-wav": "wav",
  "audio/mpeg": "mp3",
  "audio/mp3": "mp3",
  "text/plain": "txt",
  "application/json": "json"
}

/**
 * Where a file is written: `observability/files/<hash>.<ext>`, the hash of its base64 text.
 * TensorZero hashes with BLAKE3, which Node does not have: SHA-256 here, so the same file gets
 * another name than TensorZero would give it (both are content addresses: nothing reads the name).
 */
export const storagePathOf = (kind: StorageKind, data: string, mimeType: string): StoragePath => {
  const hash = createHash("sha256").update(data).digest("hex")
  const extension = extensions[mimeType.toLowerCase()]
  return { kind, path: `observability/files/${hash}${extension === undefined ? "" : `.${extension}`}` }
}

type Base64FileBlock = Extract<InputBlock, { file_type: "base64" }>

const isBase64File = (block: InputBlock): block is Base64FileBlock => block.type === "file" && block.file_type === "base64"
const isStoredFile = (block: InputBlock): block is ObjectStorageFileBlock => block.type === "file" && block.file_type === "object_storage"

const blocksOf = (input: Input): ReadonlyArray<InputBlock> =>
  (input.messages ?? []).flatMap((message) => (typeof message.content === "string" ? [] : message.content))

/** whether a block of `input` is one `test` holds for; asked of every inference, so it allocates nothing */
const someBlock = (input: Input, test: (block: InputBlock) => boolean): boolean => {
  const messages = input.messages
  if (messages === undefined) return false
  for (let i = 0; i < messages.length; i++) {
    const content = messages[i]!.content
    if (typeof content === "string") continue
    for (let j = 0; j < content.length; j++) if (test(content[j]!)) return true
  }
  return false
}

/** whether the input carries a base64 file: the only inputs the storage changes */
export const hasInlineFiles = (input: Input): boolean => someBlock(input, isBase64File)
/** whether the input names a file kept in object storage */
export const hasStoredFiles = (input: Input): boolean => someBlock(input, isStoredFile)

/**
 * `input` without its files kept in object storage, for checks of its templates only (a GEPA
 * candidate's): no template renders a file, and reading them would cost a read per check.
 */
export const withoutStoredFiles = (input: Input): Input =>
  input.messages === undefined || !hasStoredFiles(input) ? input : {
    ...input,
    messages: input.messages.map((message) =>
      typeof message.content === "string" ? message : { ...message, content: message.content.filter((block) => !isStoredFile(block)) }
    )
  }

/** `input` with each block replaced by what `f` makes of it (messages without blocks as they are) */
const mapBlocks = <E>(
  input: Input,
  f: (block: InputBlock, path: string) => Effect.Effect<InputBlock, E>
): Effect.Effect<Input, E> =>
  Effect.map(
    Effect.forEach(input.messages ?? [], (message, i): Effect.Effect<InputMessage, E> =>
      typeof message.content === "string"
        ? Effect.succeed(message)
        : Effect.map(
          Effect.forEach(message.content, (block, j) => f(block, `input.messages[${i}].content[${j}]`)),
          (content) => ({ ...message, content })
        )),
    (messages) => (input.messages === undefined ? input : { ...input, messages })
  )

const storedBlock = (block: Base64FileBlock, storagePath: StoragePath): ObjectStorageFileBlock => ({
  type: "file",
  file_type: "object_storage",
  mime_type: block.mime_type,
  storage_path: storagePath,
  ...(block.detail !== undefined && { detail: block.detail })
})

/**
 * The input as it is stored: each base64 file written to `store` and kept as its
 * `storage_path`, without its data (`disabled`: nothing written, the path's kind says so). A
 * file whose write fails stays inline, and the failure is logged: nothing is lost.
 */
export const storedInput = (input: Input, store: ObjectStore): Effect.Effect<Input> =>
  mapBlocks(input, (block) => {
    if (!isBase64File(block)) return Effect.succeed(block)
    const storagePath = storagePathOf(store.kind, block.data, block.mime_type)
    if (store.kind.type === "disabled") return Effect.succeed(storedBlock(block, storagePath))
    return store.put(storagePath.path, Buffer.from(block.data, "base64"), block.mime_type).pipe(
      Effect.as<InputBlock>(storedBlock(block, storagePath)),
      Effect.catch((failure) =>
        Effect.as(
          Effect.logWarning(`object storage: could not write the input file ${storagePath.path}, kept inline in the stored input: ${failure.message}`),
          block
        )
      )
    )
  })

/** a key the storage can hold: relative, without empty, "." or ".." segments (a folder's files must not be read from outside it) */
export const isObjectKey = (path: string): boolean =>
  path.length > 0 && path.length <= 1024 && !path.includes("\\") && !path.includes("\0") &&
  path.split("/").every((segment) => segment !== "" && segment !== "." && segment !== "..")

/** TensorZero writes an absent option as null: an absent and a null setting are the same storage */
const sameKind = (a: StorageKind, b: StorageKind): boolean => {
  if (a.type === "s3_compatible" && b.type === "s3_compatible") {
    return (a.bucket_name ?? null) === (b.bucket_name ?? null) && (a.region ?? null) === (b.region ?? null) &&
      (a.endpoint ?? null) === (b.endpoint ?? null) && (a.allow_http ?? null) === (b.allow_http ?? null)
  }
  if (a.type === "filesystem" && b.type === "filesystem") return a.path === b.path
  return a.type === b.type
}

/**
 * `input` with each file kept in object storage read back as a base64 file, for the provider;
 * a 400 naming the field when the file cannot be read here (another storage, none configured,
 * disabled, missing), a 503 when the storage fails.
 */
export const readStoredFiles = (input: Input, store: ObjectStore | undefined): Effect.Effect<Input, InvalidRequest | ServiceUnavailable> =>
  mapBlocks(input, (block, path) => {
    if (!isStoredFile(block)) return Effect.succeed(block)
    const kind = block.storage_path.kind
    const where = `${path}.storage_path`
    if (store === undefined) {
      return Effect.fail(new InvalidRequest({ message: `${where}: this gateway has no [object_storage] to read the file from` }))
    }
    if (kind.type === "disabled" || store.kind.type === "disabled") {
      return Effect.fail(new InvalidRequest({ message: `${where}: object storage is disabled, so the file was not kept and cannot be read` }))
    }
    if (!sameKind(kind, store.kind)) {
      return Effect.fail(new InvalidRequest({
        message: `${where}.kind: not the configured object storage (${JSON.stringify(store.kind)}): the file cannot be read from ${JSON.stringify(kind)}`
      }))
    }
    if (!isObjectKey(block.storage_path.path)) {
      return Effect.fail(new InvalidRequest({ message: `${where}.path: not an object key (relative, no "." or ".." segment): ${JSON.stringify(block.storage_path.path).slice(0, 200)}` }))
    }
    return store.get(block.storage_path.path).pipe(
      // the storage failing is no fault of the request's: 503, as for a database that does not answer
      Effect.mapError((failure) => new ServiceUnavailable({ message: `${where}.path: could not read ${block.storage_path.path}: ${failure.message}` })),
      Effect.flatMap((bytes) =>
        bytes === undefined
          ? Effect.fail(new InvalidRequest({ message: `${where}.path: no object at ${block.storage_path.path} in the object storage` }))
          : Effect.succeed<InputBlock>({
            type: "file",
            file_type: "base64",
            data: Buffer.from(bytes).toString("base64"),
            mime_type: block.mime_type,
            ...(block.detail !== undefined && { detail: block.detail })
          })
      )
    )
  })

/** The files `stored` keeps in object storage (or, disabled, drops) that were inline in `original`: their base64 data → where they are. */
export const keptFiles = (original: Input, stored: Input): ReadonlyMap<string, StoragePath> => {
  const kept = new Map<string, StoragePath>()
  const before = blocksOf(original)
  const after = blocksOf(stored)
  for (let i = 0; i < before.length && i < after.length; i++) {
    const was = before[i]!
    const now = after[i]!
    if (isBase64File(was) && isStoredFile(now)) kept.set(was.data, now.storage_path)
  }
  return kept
}

/** what a model call's record shows where a kept file's bytes were */
const placeholder = (where: StoragePath) => `<file stored at ${where.path}>`

/** `text` (a raw request) with each kept file's base64 data replaced by where the file is */
const withoutData = (text: string, kept: ReadonlyMap<string, StoragePath>): string => {
  let result = text
  for (const [data, where] of kept) if (result.includes(data)) result = result.split(data).join(placeholder(where))
  return result
}

/** the messages sent to a model, each kept file's source naming its `storage_path` instead of carrying its data */
const messagesWithoutData = (messages: ReadonlyArray<RequestMessage>, kept: ReadonlyMap<string, StoragePath>): ReadonlyArray<unknown> =>
  messages.map((message) => ({
    ...message,
    content: message.content.map((block) => {
      if (block.type !== "file" || block.source.kind !== "base64") return block
      const where = kept.get(block.source.data)
      return where === undefined ? block : { ...block, source: { kind: "object_storage", mimeType: block.source.mimeType, storagePath: where } }
    })
  }))

/**
 * A record of a model call (a stored or a batch model inference) without the bytes of the
 * files kept in object storage: its raw request names where each is, and its messages their
 * `storage_path`. Keeping files out of the database is what object storage is for; the
 * inference's own input already names them.
 */
export const modelCallWithoutFileData = <R extends { readonly rawRequest: string; readonly inputMessages: unknown }>(
  record: R,
  kept: ReadonlyMap<string, StoragePath>
): R =>
  kept.size === 0 ? record : {
    ...record,
    rawRequest: withoutData(record.rawRequest, kept),
    inputMessages: Array.isArray(record.inputMessages) ? messagesWithoutData(record.inputMessages as ReadonlyArray<RequestMessage>, kept) : record.inputMessages
  }

/** a completed inference's rows, its model calls' records without the bytes of the `kept` files */
export const unitWithoutFileData = (unit: WriteUnit, kept: ReadonlyMap<string, StoragePath>): WriteUnit =>
  kept.size === 0 ? unit : {
    ...unit,
    batch: { ...unit.batch, modelInferences: unit.batch.modelInferences.map((call) => modelCallWithoutFileData(call, kept)) }
  }
