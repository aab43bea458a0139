/**
 * A batch's input files and object storage (`[object_storage]`), as for `/inference`
 * (src/objectStorage/inputFiles.ts): files an input names by `storage_path` are read back for
 * the provider, and the batch's stored inferences keep each base64 file as its `storage_path`,
 * their model calls' records without its bytes. Files are written before the batch is stored,
 * which its rows point at.
 */
import * as Effect from "effect/Effect"
import type { BatchInferenceRequest } from "../api/batch.ts"
import type { Input } from "../api/inference.ts"
import { InvalidRequest, type ServiceUnavailable } from "../errors.ts"
import { hasInlineFiles, hasStoredFiles, keptFiles, modelCallWithoutFileData, readStoredFiles, storedInput } from "../objectStorage/inputFiles.ts"
import type { ObjectStore } from "../objectStorage/storage.ts"
import { atIndex } from "./prepare.ts"
import type { StoredBatchInference } from "./store.ts"

/** `request` with the files its inputs keep in object storage read into them (itself when none does) */
export const readBatchFiles = (
  request: BatchInferenceRequest,
  store: ObjectStore | undefined
): Effect.Effect<BatchInferenceRequest, InvalidRequest | ServiceUnavailable> => {
  if (!request.inputs.some(hasStoredFiles)) return Effect.succeed(request)
  return Effect.map(
    Effect.forEach(request.inputs, (input, index) =>
      hasStoredFiles(input)
        ? Effect.mapError(readStoredFiles(input, store), (failure) =>
          failure instanceof InvalidRequest ? new InvalidRequest({ message: atIndex(failure.message, index) }) : failure)
        : Effect.succeed(input)),
    (inputs) => ({ ...request, inputs })
  )
}

/**
 * The batch's rows as stored: each row's input as the request gave it (`original`), its base64
 * files written to `store`; the model calls' records name the files sent from `sent` (the inputs
 * with every file read) by their `storage_path`.
 */
export const storeBatchFiles = (
  rows: ReadonlyArray<StoredBatchInference>,
  original: ReadonlyArray<Input>,
  sent: ReadonlyArray<Input>,
  store: ObjectStore | undefined
): Effect.Effect<ReadonlyArray<StoredBatchInference>> =>
  original === sent && (store === undefined || !original.some(hasInlineFiles))
    ? Effect.succeed(rows)
    : Effect.forEach(rows, (row) => {
      const input = original[row.index]!
      const stored = store !== undefined && hasInlineFiles(input) ? storedInput(input, store) : Effect.succeed(input)
      return Effect.map(stored, (kept) => ({ ...modelCallWithoutFileData(row, keptFiles(sent[row.index]!, kept)), input: kept }))
    })
