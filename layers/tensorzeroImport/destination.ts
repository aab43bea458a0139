/**
 * Where `gateway import-tensorzero` writes: this gateway's analytics database (inferences, model
 * calls, feedback, datasets, workflow evaluations, batches, DICL examples, through the same
 * stores the gateway writes with) and its relational database (API keys). Every write is
 * idempotent by id, so a page written twice (a run killed before it saved its position) is
 * stored once.
 */
import * as Effect from "effect/Effect"
import type { AnalyticsStores } from "../observability/stores.ts"
import type { RelationalStore } from "../../src/relational.ts"
import type { DiclExample } from "../../src/dicl/store.ts"
import type { StoredFeedback, StoredInference } from "../../src/analytics/records.ts"
import { evaluationRunIdTag } from "../../src/evaluations/names.ts"
import { evaluationRunOf } from "../../src/tensorzeroImport/evaluationRuns.ts"
import type { StreamName, TzEvaluationRun } from "../../src/tensorzeroImport/source.ts"
import type { MappedRecords, Skip } from "../../src/tensorzeroImport/map.ts"
import type { StoreError } from "../../src/storeError.ts"
import { relationalUrlVariable } from "../../src/relational.ts"
import type { ObjectStorageFailure } from "../../src/objectStorage/storage.ts"
import type { FileCopier } from "./files.ts"

/** what a write stored, and the records the destination refused (each with why) */
export interface Written {
  readonly written: number
  readonly refused: ReadonlyArray<{ readonly id: string; readonly skip: Skip }>
}

export type Writers = { readonly [S in StreamName]: (records: ReadonlyArray<MappedRecords[S]>) => Effect.Effect<Written, StoreError> }

const wrote = (count: number): Written => ({ written: count, refused: [] })

/** DICL examples go in one append per (function, variant) of the page */
const byVariant = (examples: ReadonlyArray<DiclExample>): Map<string, Array<DiclExample>> => {
  const groups = new Map<string, Array<DiclExample>>()
  for (const example of examples) {
    const key = JSON.stringify([example.functionName, example.variantName])
    const group = groups.get(key)
    if (group === undefined) groups.set(key, [example])
    else group.push(example)
  }
  return groups
}

/**
 * With `--copy-files`: each record with its input files copied (`copy`); a record whose file
 * cannot be copied is refused, saying which file
 */
const copyingFiles = <R>(
  records: ReadonlyArray<R>,
  files: FileCopier | undefined,
  idOf: (record: R) => string,
  copy: (record: R, files: FileCopier) => Effect.Effect<R, ObjectStorageFailure>
) =>
  files === undefined
    ? Effect.succeed({ copied: records, refused: [] as Array<Written["refused"][number]> })
    : Effect.map(
      Effect.forEach(records, (record) => Effect.result(copy(record, files)), { concurrency: 8 }),
      (results) => {
        const copied: Array<R> = []
        const refused: Array<Written["refused"][number]> = []
        results.forEach((result, index) => {
          if (result._tag === "Success") copied.push(result.success)
          else refused.push({ id: idOf(records[index]), skip: { reason: "an input file cannot be copied (--copy-files)", detail: result.failure.message } })
        })
        return { copied, refused }
      }
    )

/** `write` of the records whose files were copied, the others refused */
const withFiles = <R>(
  records: ReadonlyArray<R>,
  files: FileCopier | undefined,
  idOf: (record: R) => string,
  copy: (record: R, files: FileCopier) => Effect.Effect<R, ObjectStorageFailure>,
  write: (records: ReadonlyArray<R>) => Effect.Effect<Written, StoreError>
): Effect.Effect<Written, StoreError> =>
  Effect.flatMap(copyingFiles(records, files, idOf, copy), ({ copied, refused }) =>
    Effect.map(copied.length === 0 ? Effect.succeed(wrote(0)) : write(copied), (written) => ({ written: written.written, refused: [...refused, ...written.refused] })))

/** reads of the destination's rows: a page of inferences, a slice of targets' feedback, results written at once */
const readRows = 1000

/**
 * An inference evaluation run of TensorZero with its results, built from its inferences and their
 * scores already imported into the destination (the inferences and feedback streams come first)
 */
const importEvaluationRun = (stores: AnalyticsStores, workspace: string, tzRun: TzEvaluationRun) =>
  Effect.gen(function*() {
    const inferences: Array<StoredInference> = []
    const filter = { type: "tag" as const, key: evaluationRunIdTag, value: tzRun.runId, comparison_operator: "=" as const }
    for (let before: string | undefined; ;) {
      const page = yield* stores.inferences.listInferences(workspace, { filter, before, limit: readRows, offset: 0 })
      inferences.push(...page)
      if (page.length < readRows) break
      before = page[page.length - 1].id
    }
    const feedback: Array<StoredFeedback> = []
    for (let index = 0; index < inferences.length; index += readRows) {
      feedback.push(...yield* stores.feedback.getFeedback(workspace, inferences.slice(index, index + readRows).map((inference) => inference.id)))
    }
    const { run, results } = evaluationRunOf(tzRun, inferences, feedback)
    yield* stores.evaluations.saveRun(workspace, run)
    for (let index = 0; index < results.length; index += readRows) yield* stores.evaluations.insertResults(workspace, results.slice(index, index + readRows))
  })

export const makeWriters = (
  stores: AnalyticsStores,
  relational: RelationalStore | undefined,
  workspace: string,
  files?: FileCopier | undefined
): Writers => {
  const { database } = stores
  /** inferences, model calls and feedback: encoded and written as the write queue writes them */
  const rows = (batch: Parameters<typeof database.encode>[0], count: number) =>
    Effect.gen(function*() {
      const encoded = database.encode(batch)
      if (encoded._tag === "Failure") return yield* Effect.fail(encoded.failure)
      yield* database.write(encoded.success)
      return wrote(count)
    })
  return {
    api_keys: (keys) =>
      relational === undefined
        ? Effect.succeed({
          written: 0,
          refused: keys.map((key) => ({ id: key.publicId, skip: { reason: `no relational database to keep keys in (set ${relationalUrlVariable})` } }))
        })
        : Effect.map(relational.keys.importKeys(keys), (outcome) => ({
          written: keys.length - outcome.refusedPublicIds.length,
          refused: outcome.refusedPublicIds.map((publicId) => ({ id: publicId, skip: { reason: "public id held by a key this gateway issued" } }))
        })),
    datapoints: (records) =>
      withFiles(records, files, (datapoint) => datapoint.id, (datapoint, files) =>
        Effect.map(files.copyInput(datapoint.input), (input) => ({ ...datapoint, input })), (datapoints) =>
      Effect.gen(function*() {
        yield* stores.datasets.insertDatapoints(workspace, datapoints)
        // a datapoint imported live that TensorZero has staled since (edited or deleted there)
        for (const datapoint of datapoints) {
          if (datapoint.staledAt !== undefined) yield* stores.datasets.staleDatapoints(workspace, datapoint.datasetName, [datapoint.id], datapoint.staledAt)
        }
        return wrote(datapoints.length)
      })),
    inferences: (records) =>
      withFiles(records, files, (inference) => inference.id, (inference, files) =>
        Effect.map(files.copyInput(inference.input), (input) => ({ ...inference, input })), (inferences) =>
      rows({ inferences, modelInferences: [], feedback: [] }, inferences.length)),
    model_inferences: (modelInferences) => rows({ inferences: [], modelInferences, feedback: [] }, modelInferences.length),
    feedback: (feedback) => rows({ inferences: [], modelInferences: [], feedback }, feedback.length),
    evaluation_runs: (runs) => Effect.as(Effect.forEach(runs, (run) => importEvaluationRun(stores, workspace, run), { discard: true }), wrote(runs.length)),
    workflow_evaluation_runs: (runs) =>
      Effect.as(Effect.forEach(runs, (run) => stores.workflowEvaluations.insertRun(workspace, run), { discard: true }), wrote(runs.length)),
    workflow_evaluation_episodes: (episodes) =>
      Effect.as(Effect.forEach(episodes, (episode) => stores.workflowEvaluations.insertEpisode(workspace, episode), { discard: true }), wrote(episodes.length)),
    batches: (records) =>
      withFiles(records, files, ({ batch }) => batch.id, (record, files) =>
        Effect.map(
          Effect.forEach(record.inferences, (inference) => Effect.map(files.copyInput(inference.input), (input) => ({ ...inference, input }))),
          (inferences) => ({ ...record, inferences })
        ), (batches) =>
      Effect.as(Effect.forEach(batches, ({ batch, inferences }) => stores.batches.insertBatch(batch, inferences), { discard: true }), wrote(batches.length))),
    dicl_examples: (records) =>
      withFiles(records, files, (example) => example.id, (example, files) =>
        Effect.map(files.copyInput(example.input), (input) => ({ ...example, input })), (examples) =>
      Effect.as(
        Effect.forEach(byVariant(examples).values(), (group) =>
          stores.dicl.write(workspace, group[0].functionName, group[0].variantName, group, "append"), { discard: true }),
        wrote(examples.length)
      ))
  }
}
