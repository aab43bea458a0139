/**
 * The storage port of datasets (spec 2.5, 3, 4.5): versioned datapoints in named datasets.
 * A datapoint version is immutable but for its `name` and its staling: an update writes a new
 * version with a new id and stales the old one; a delete stales; stale versions stay stored
 * and readable by id, and are never listed. Written synchronously (not through the write
 * queue): a caller gets ids it can read at once. Implemented by layers/clickhouse/datasets.ts
 * and layers/postgres/datasets.ts, both checked by the same conformance suite
 * (test/integration/store-datasets.test.ts).
 *
 * Workspaces (issue 39): every method takes the workspace first. Datasets are named per
 * workspace: the writes stamp it on the rows, every read and change sees only its rows, so two
 * workspaces may each have a dataset `train`, and another workspace's datapoint answers as a
 * missing one.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { FilterTree, TagFilter, TimeFilter } from "../storedInferences/store.ts"
import type { StoreError } from "../storeError.ts"
import type { AnalyticsPort, AnalyticsStore } from "../analytics/stores.ts"

/** The tool fields of a chat datapoint, as given (null: cleared; absent: never set). */
export interface DatapointToolParams {
  readonly allowed_tools?: ReadonlyArray<string> | null | undefined
  readonly tool_choice?: unknown
  readonly parallel_tool_calls?: boolean | null | undefined
  /** tools defined with the datapoint: `{name, description, parameters, strict}` */
  readonly additional_tools?: ReadonlyArray<unknown> | null | undefined
}

/** One version of a datapoint, as stored and read back. */
export interface StoredDatapoint {
  /** UUIDv7; its time is the version's creation time */
  readonly id: string
  readonly datasetName: string
  readonly functionName: string
  readonly functionType: "chat" | "json"
  /** an inference input (spec 2.2), as validated */
  readonly input: unknown
  /** chat: a list of output blocks; json: the output value; absent: no output */
  readonly output?: unknown
  readonly episodeId?: string | undefined
  readonly tags: Readonly<Record<string, string>>
  readonly name?: string | undefined
  /** chat only */
  readonly toolParams?: DatapointToolParams | undefined
  /** json only: the datapoint's own output schema, overriding the function's */
  readonly outputSchema?: unknown
  /** the inference it was built from (`from_inferences`), kept across its versions */
  readonly sourceInferenceId?: string | undefined
  /**
   * the id of the datapoint's first version, on every later version (absent on a first
   * version): what ties the versions of one datapoint together for its history
   */
  readonly firstVersionId?: string | undefined
  /** created or edited by hand rather than taken as it was from an inference */
  readonly isCustom: boolean
  /** epoch milliseconds; absent while the version is live */
  readonly staledAt?: number | undefined
  /** epoch milliseconds: when this version was created, renamed or staled last */
  readonly updatedAt: number
}

/** A version to write: the record, and the text `search_relevance` ranks it by. */
export interface NewDatapoint extends StoredDatapoint {
  /** the input's and output's text, lower-cased (src/datasets/search.ts) */
  readonly searchText: string
}

/** Datapoints filter on tags and on the time of their id. */
export type DatapointFilter = FilterTree<TagFilter | TimeFilter>

/** One criterion of a listing's order; the id (newest first) breaks the last ties. */
export type DatapointOrder =
  | { readonly by: "timestamp"; readonly direction: "ascending" | "descending" }
  /** the number of `search` terms the search text holds, most first */
  | { readonly by: "search_relevance" }

export interface DatapointQuery {
  readonly datasetName: string
  readonly functionName?: string | undefined
  readonly filter?: DatapointFilter | undefined
  /**
   * Lower-cased terms: only datapoints whose search text holds at least one of them are listed
   * (substring match).
   */
  readonly search?: ReadonlyArray<string> | undefined
  /** empty: newest first */
  readonly orderBy: ReadonlyArray<DatapointOrder>
  /** keyset paging in id order (ascending): only ids greater than this one; with it, `orderBy` must be empty */
  readonly after?: string | undefined
  readonly limit: number
  readonly offset: number
}

/** A live datapoint replaced by a new version. */
export interface Replacement {
  readonly previousId: string
  readonly next: NewDatapoint
}

/** The result of a change that applies only to live datapoints of the dataset. */
export interface Applied {
  /** the ids asked for that are not live datapoints of the dataset (missing, stale or in another one): nothing was changed */
  readonly notLive: ReadonlyArray<string>
}

export interface DatasetSummary {
  readonly name: string
  /** live datapoints per function, by function name */
  readonly functions: ReadonlyArray<{ readonly functionName: string; readonly count: number }>
  /** epoch milliseconds: the newest `updatedAt` of its datapoints, stale ones included */
  readonly lastUpdated: number
}

export interface DatasetStore extends AnalyticsStore {
  /** writes new versions, all or nothing */
  readonly insertDatapoints: (workspace: string, datapoints: ReadonlyArray<NewDatapoint>) => Effect.Effect<void, StoreError>
  /**
   * writes new versions given a part at a time, all or nothing: each part is made as the write
   * reaches it (iterating `parts` again if the write is retried) and let go once sent, so that
   * a large write never holds all its rows at once; a turn of the event loop between parts
   */
  readonly insertDatapointsInParts: (workspace: string, parts: Iterable<ReadonlyArray<NewDatapoint>>) => Effect.Effect<void, StoreError>
  /** the versions of the dataset (of any dataset when undefined) with these ids, stale ones included, in any order (ids of none are left out) */
  readonly getDatapoints: (workspace: string, datasetName: string | undefined, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<StoredDatapoint>, StoreError>
  /** live datapoints only */
  readonly listDatapoints: (workspace: string, query: DatapointQuery) => Effect.Effect<ReadonlyArray<StoredDatapoint>, StoreError>
  /**
   * Stales each `previousId` and writes its replacement, all or nothing: when one of them is not
   * a live datapoint of the dataset (concurrent updates of one datapoint: all but the first to
   * commit), nothing is written and it is named in `notLive`.
   */
  readonly replaceDatapoints: (workspace: string, datasetName: string, replacements: ReadonlyArray<Replacement>, now: number) => Effect.Effect<Applied, StoreError>
  /** sets the name of live datapoints in place (same id, `updatedAt` = now), all or nothing as above */
  readonly renameDatapoints: (
    workspace: string,
    datasetName: string,
    names: ReadonlyArray<{ readonly id: string; readonly name: string | undefined }>,
    now: number
  ) => Effect.Effect<Applied, StoreError>
  /** stales the live datapoints among `ids` (every live one of the dataset when "all"); returns how many */
  readonly staleDatapoints: (workspace: string, datasetName: string, ids: ReadonlyArray<string> | "all", now: number) => Effect.Effect<number, StoreError>
  /**
   * every version of the datapoint `id` is a version of (the versions sharing its first
   * version, stale ones included), newest first; empty when `id` is no datapoint of the dataset
   */
  readonly datapointVersions: (workspace: string, datasetName: string, id: string) => Effect.Effect<ReadonlyArray<StoredDatapoint>, StoreError>
  /** every dataset with at least one datapoint (live or stale), by name */
  readonly listDatasets: (workspace: string) => Effect.Effect<ReadonlyArray<DatasetSummary>, StoreError>
}

/** The DatasetStore of the analytics database, absent while observability is off (provided by layers/observability/). */
export class DatasetStoreService extends Context.Service<DatasetStoreService, AnalyticsPort<DatasetStore>>()("gateway/DatasetStore") {}
