/**
 * A dataset's live datapoints as JSON Lines: exported one datapoint per line as get_datapoints
 * answers it (src/datasets/json.ts), oldest first, read a page at a time so that a dataset of
 * any size streams in bounded memory; imported from lines as create takes them or as export
 * writes them, checked exactly as create checks them, all or nothing.
 *
 * On import the fields only export writes are dropped: the id, dataset, times and staling
 * (an import writes new versions, with new ids, into the dataset of the URL), and `is_custom`
 * and `source_inference_id`: an imported datapoint is created as create creates one, by hand,
 * since nothing ties the lines to the inferences they may once have come from (they may have
 * been edited, or come from another gateway).
 *
 * An import holds its whole file, checked, until it is written (all or nothing): about eight
 * times the file's size at its peak (`npm run bench:datasets`: 0.6 GB more resident memory for
 * 100,000 datapoints in 73 MiB). Imports therefore run one at a time in a process; others wait
 * their turn with their bodies read (as many as `max_request_bytes_in_flight` admits).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import { checkDatasetName, CreateDatapoint } from "../api/datasets.ts"
import { formatFieldIssues, makeDecoder } from "../decode.ts"
import { InvalidRequest } from "../errors.ts"
import { storeFailure } from "../observability/stores.ts"
import { maxJsonDepth, tooDeepPath } from "../untrusted.ts"
import { datapointJson } from "./json.ts"
import type { DatasetDeps, DatasetOperations, DatasetTransfers } from "./service.ts"

/** datapoints read from the store at a time while exporting */
export const exportPageSize = 1000

/** the nil UUID: every datapoint's id is after it */
const beforeEveryId = "00000000-0000-0000-0000-000000000000"

/** datapoints (non-blank lines) one import takes at most: all of them are checked, then written, in one piece */
export const maxImportedDatapoints = 100_000

/** what export writes that create does not take */
const exportOnlyFields = ["id", "dataset_name", "staled_at", "updated_at", "created_at", "is_custom", "source_inference_id"] as const

const decodeDatapoint = makeDecoder(CreateDatapoint)

const invalid = (message: string) => new InvalidRequest({ message })

/** the datapoint of one line (numbered from 1), or the problem with it */
const parseLine = (text: string, line: number): CreateDatapoint | InvalidRequest => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    return invalid(`line ${line}: malformed JSON: ${(error as Error).message}`)
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) return invalid(`line ${line}: expected a JSON object (one datapoint)`)
  const fields = json as Record<string, unknown>
  // before anything walks it recursively
  const deep = tooDeepPath(fields)
  if (deep !== undefined) return invalid(`line ${line}: ${deep}: nests deeper than ${maxJsonDepth} levels`)
  for (const field of exportOnlyFields) delete fields[field]
  const decoded = decodeDatapoint(fields)
  return decoded.ok ? decoded.value : invalid(`line ${line}: ${formatFieldIssues(decoded.issues)}`)
}

export const makeJsonLines = (
  deps: DatasetDeps,
  operations: DatasetOperations
): Pick<DatasetTransfers, "exportDatapoints" | "importDatapoints"> => {
  const { stores } = deps
  const oneImportAtATime = Semaphore.makeUnsafe(1)
  return {
    exportDatapoints: (datasetName) =>
      // keyset paging on the id, ascending from the smallest UUID: pages stay as cheap at the end of a large dataset as at its start
      Stream.paginate(beforeEveryId, (after) =>
        stores.datasets.listDatapoints({ datasetName, orderBy: [], after, limit: exportPageSize, offset: 0 }).pipe(
          Effect.mapError(storeFailure(stores)),
          Effect.map((page) =>
            [
              page.map((datapoint) => JSON.stringify(datapointJson(datapoint)) + "\n"),
              page.length < exportPageSize ? Option.none() : Option.some(page[page.length - 1].id)
            ] as const
          )
        )),

    importDatapoints: (datasetName, body) =>
      oneImportAtATime.withPermit(Effect.andThen(checkDatasetName(datasetName), () => {
        const datapoints: Array<CreateDatapoint> = []
        /** the line number (from 1) of each datapoint */
        const lines: Array<number> = []
        let start = 0
        for (let line = 1; start <= body.length; line++) {
          const newline = body.indexOf("\n", start)
          const end = newline === -1 ? body.length : newline
          const text = body.slice(start, end)
          start = end + 1
          if (text.trim() === "") continue
          if (datapoints.length === maxImportedDatapoints) {
            return Effect.fail(invalid(
              `line ${line}: an import takes at most ${maxImportedDatapoints} datapoints (non-blank lines); split the file over several imports`
            ))
          }
          const datapoint = parseLine(text, line)
          if (datapoint instanceof InvalidRequest) return Effect.fail(datapoint)
          datapoints.push(datapoint)
          lines.push(line)
        }
        if (datapoints.length === 0) return Effect.fail(invalid("the body holds no datapoint: expected one JSON object per line (JSON Lines)"))
        return operations.create(datasetName, datapoints, (index) => `line ${lines[index]}`)
      }))
  }
}
