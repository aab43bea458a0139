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
import type { ImportedStream, MappedRecords, Skip } from "../../src/tensorzeroImport/map.ts"
import type { StoreError } from "../../src/storeError.ts"
import { relationalUrlVariable } from "../../src/relational.ts"

/** what a write stored, and the records the destination refused (each with why) */
export interface Written {
  readonly written: number
  readonly refused: ReadonlyArray<{ readonly id: string; readonly skip: Skip }>
}

export type Writers = { readonly [S in ImportedStream]: (records: ReadonlyArray<MappedRecords[S]>) => Effect.Effect<Written, StoreError> }

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

export const makeWriters = (stores: AnalyticsStores, relational: RelationalStore | undefined, workspace: string): Writers => {
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
          written: keys.length - outcome.refused.length,
          refused: outcome.refused.map((publicId) => ({ id: publicId, skip: { reason: "public id held by a key this gateway issued" } }))
        })),
    datapoints: (datapoints) =>
      Effect.gen(function*() {
        yield* stores.datasets.insertDatapoints(workspace, datapoints)
        // a datapoint imported live that TensorZero has staled since (edited or deleted there)
        for (const datapoint of datapoints) {
          if (datapoint.staledAt !== undefined) yield* stores.datasets.staleDatapoints(workspace, datapoint.datasetName, [datapoint.id], datapoint.staledAt)
        }
        return wrote(datapoints.length)
      }),
    inferences: (inferences) => rows({ inferences, modelInferences: [], feedback: [] }, inferences.length),
    model_inferences: (modelInferences) => rows({ inferences: [], modelInferences, feedback: [] }, modelInferences.length),
    feedback: (feedback) => rows({ inferences: [], modelInferences: [], feedback }, feedback.length),
    workflow_evaluation_runs: (runs) =>
      Effect.as(Effect.forEach(runs, (run) => stores.workflowEvaluations.insertRun(workspace, run), { discard: true }), wrote(runs.length)),
    workflow_evaluation_episodes: (episodes) =>
      Effect.as(Effect.forEach(episodes, (episode) => stores.workflowEvaluations.insertEpisode(workspace, episode), { discard: true }), wrote(episodes.length)),
    batches: (batches) =>
      Effect.as(Effect.forEach(batches, ({ batch, inferences }) => stores.batches.insertBatch(batch, inferences), { discard: true }), wrote(batches.length)),
    dicl_examples: (examples) =>
      Effect.as(
        Effect.forEach(byVariant(examples).values(), (group) =>
          stores.dicl.write(workspace, group[0].functionName, group[0].variantName, group, "append"), { discard: true }),
        wrote(examples.length)
      )
  }
}
