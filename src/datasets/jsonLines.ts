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
 * An import streams: each line is checked as its bytes arrive (its shape on the bytes first, as
 * a request body's, then parsed, decoded and checked against its function), a slice of lines
 * at a time with a turn of the event loop between slices, so that requests in flight meanwhile
 * are answered. All or nothing, nothing is written before the last line is checked: what an
 * import keeps of each line until then is its checked datapoint as compact JSON (about the
 * line's size, off the heap), not the parsed value (eight times the line's size). Then it is
 * written a part at a time in one transaction (on ClickHouse, one INSERT whose text is built a
 * part at a time), each part made again from that JSON as the write reaches it. An import thus
 * holds about its file's size (which counts against `max_request_bytes_in_flight` until it is
 * written), plus a slice of lines and a part of datapoints; imports run side by side. After a
 * bad line the rest of the body is read and dropped, unchecked, before the 400.
 */
import { Buffer } from "node:buffer"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { checkDatasetName, CreateDatapoint } from "../api/datasets.ts"
import type { GatewayConfig } from "../config/types.ts"
import { formatFieldIssues, makeDecoder } from "../decode.ts"
import { InvalidRequest, NotFound, PayloadTooLarge } from "../errors.ts"
import { itemsPerTurn, letIoRun } from "../eventLoop.ts"
import { uuidv7 } from "../ids.ts"
import { jsonShapeMessage, jsonShapeProblem } from "../jsonShape.ts"
import { storeFailure } from "../analytics/stores.ts"
import { checkNewDatapoint, version } from "./datapoints.ts"
import { datapointJson } from "./json.ts"
import type { DatasetDeps, DatasetTransfers } from "./operations.ts"
import type { NewDatapoint } from "./store.ts"
import { HeldTexts } from "./heldTexts.ts"
import { type CheckedDatapoint, datapointSizeProblem } from "./validate.ts"

/** datapoints read from the store at a time while exporting */
export const exportPageSize = 1000

/** the nil UUID: every datapoint's id is after it */
const beforeEveryId = "00000000-0000-0000-0000-000000000000"

/** datapoints (non-blank lines) one import takes at most: all of them are checked, then written, in one piece */
export const maxImportedDatapoints = 100_000

/**
 * The largest import body: 128 MiB, `maxImportedDatapoints` lines of 1.3 KB on average (a short
 * conversation and its answer, as export writes it, is 0.7 KB), past the bound of JSON requests
 * (10 MiB by default); or `max_request_body_bytes` when that is larger. Never more than the
 * bodies all requests may hold at once (`max_request_bytes_in_flight`), which would refuse it
 * as busy forever. It bounds what an import holds too: its checked datapoints as JSON.
 */
export const importBodyLimit = (gateway: GatewayConfig["gateway"]): number =>
  Math.max(gateway.maxRequestBodyBytes, Math.min(128 * 1024 * 1024, gateway.maxRequestBytesInFlight))

/** lines checked, and bytes of lines, between two turns of the event loop (a few milliseconds of work) */
const linesPerTurn = itemsPerTurn
const bytesPerTurn = 256 * 1024

/** datapoints, and bytes of their JSON, made into one part of the write at most (one at least) */
const datapointsPerPart = itemsPerTurn
const bytesPerPart = 256 * 1024

/** what export writes that create does not take */
const exportOnlyFields = ["id", "dataset_name", "staled_at", "updated_at", "created_at", "is_custom", "source_inference_id"] as const

const decodeDatapoint = makeDecoder(CreateDatapoint)

const invalid = (message: string) => new InvalidRequest({ message })

const textDecoder = new TextDecoder()

const newline = 0x0a

/** a line with nothing but white space */
const blank = "blank"

/** the datapoint of one line (numbered from 1), checked as create checks one, or the problem with it */
const checkLine = (bytes: Uint8Array, line: number, config: GatewayConfig): Result.Result<CheckedDatapoint | typeof blank, InvalidRequest | NotFound> => {
  const text = textDecoder.decode(bytes)
  if (text.trim() === "") return Result.succeed(blank)
  // before the parse, as a request body's
  const shape = jsonShapeProblem(bytes)
  if (shape !== undefined) return Result.fail(invalid(`line ${line}: ${jsonShapeMessage(shape, bytes, 0, "the line")}`))
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    return Result.fail(invalid(`line ${line}: malformed JSON: ${(error as Error).message}`))
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) return Result.fail(invalid(`line ${line}: expected a JSON object (one datapoint)`))
  const fields = json as Record<string, unknown>
  for (const field of exportOnlyFields) delete fields[field]
  const decoded = decodeDatapoint(fields)
  if (!decoded.ok) return Result.fail(invalid(`line ${line}: ${formatFieldIssues(decoded.issues)}`))
  return checkNewDatapoint(decoded.value, config, `line ${line}`)
}

/** the new datapoints of `held` (checked datapoints as JSON), a part at a time, made as they are reached */
const partsOf = (held: HeldTexts, ids: ReadonlyArray<string>, datasetName: string, now: number): Iterable<ReadonlyArray<NewDatapoint>> => ({
  *[Symbol.iterator]() {
    let index = 0
    while (index < held.length) {
      const part: Array<NewDatapoint> = []
      let bytes = 0
      while (index < held.length && part.length < datapointsPerPart && (part.length === 0 || bytes + held.size(index) <= bytesPerPart)) {
        bytes += held.size(index)
        const checked = JSON.parse(held.text(index)) as CheckedDatapoint
        part.push(version(datasetName, checked, ids[index], now, undefined))
        index++
      }
      yield part
    }
  }
})

export const makeJsonLines = (deps: DatasetDeps): Pick<DatasetTransfers, "exportDatapoints" | "importDatapoints"> => {
  const { config, datasetStore } = deps
  return {
    exportDatapoints: (workspace, datasetName) =>
      // keyset paging on the id, ascending from the smallest UUID: pages stay as cheap at the end of a large dataset as at its start
      Stream.paginate(beforeEveryId, (after) =>
        datasetStore.listDatapoints(workspace, { datasetName, orderBy: [], after, limit: exportPageSize, offset: 0 }).pipe(
          Effect.mapError(storeFailure(datasetStore)),
          Effect.map((page) =>
            [
              page.map((datapoint) => JSON.stringify(datapointJson(datapoint)) + "\n"),
              page.length < exportPageSize ? Option.none() : Option.some(page[page.length - 1].id)
            ] as const
          )
        )),

    importDatapoints: (workspace, datasetName, body) =>
      Effect.gen(function*() {
        yield* checkDatasetName(datasetName)
        // a line is parsed in one piece: no longer than a request body
        const maxLineBytes = config.gateway.maxRequestBodyBytes
        const maxHeldBytes = importBodyLimit(config.gateway)
        const { maxRowBytes } = config.gateway.observability
        const lineTooLong = (line: number) =>
          new PayloadTooLarge({ message: `line ${line}: longer than ${maxLineBytes} bytes, the limit of a datapoint line (max_request_body_bytes)` })
        /** each datapoint checked, as JSON; its line number (from 1) */
        const held = new HeldTexts()
        /** the number of the line being read, and its bytes so far (those of earlier chunks) */
        let line = 1
        let pending: Array<Uint8Array> = []
        let pendingBytes = 0
        let linesSinceTurn = 0
        let bytesSinceTurn = 0
        /**
         * the first bad line: the rest of the body is then read and dropped, so that every client
         * gets the answer, and then the 400 (one past a bound, a 413, answers at once instead)
         */
        let refused: InvalidRequest | NotFound | undefined

        /** one whole line, checked and kept, or the problem with it */
        const take = (bytes: Uint8Array): InvalidRequest | NotFound | PayloadTooLarge | undefined => {
          if (bytes.length > maxLineBytes) return lineTooLong(line)
          if (held.length === maxImportedDatapoints && textDecoder.decode(bytes).trim() !== "") {
            return invalid(`line ${line}: an import takes at most ${maxImportedDatapoints} datapoints (non-blank lines); split the file over several imports`)
          }
          const result = checkLine(bytes, line, config)
          if (Result.isFailure(result)) return result.failure
          const checked = result.success
          if (checked !== blank) {
            const size = held.push(JSON.stringify(checked))
            // what is stored is part of what is held: only a datapoint held larger than a row may be is measured as stored
            if (size > maxRowBytes) {
              const tooLarge = datapointSizeProblem(checked, maxRowBytes, `line ${line}`)
              if (tooLarge !== undefined) return tooLarge
            }
            if (held.bytes > maxHeldBytes) {
              return new PayloadTooLarge({ message: `line ${line}: the import's datapoints exceed ${maxHeldBytes} bytes, the limit of an import` })
            }
          }
          line++
          linesSinceTurn++
          bytesSinceTurn += bytes.length
          return undefined
        }

        /** the lines `chunk` ends, checked, with turns of the event loop between slices of them */
        const takeChunk = (chunk: Uint8Array) =>
          Effect.gen(function*() {
            if (refused !== undefined) return
            let start = 0
            while (start < chunk.length) {
              const end = chunk.indexOf(newline, start)
              if (end === -1) {
                pendingBytes += chunk.length - start
                if (pendingBytes > maxLineBytes) return yield* lineTooLong(line)
                pending.push(chunk.subarray(start))
                return
              }
              const piece = chunk.subarray(start, end)
              const whole = pending.length === 0 ? piece : Buffer.concat([...pending, piece])
              pending = []
              pendingBytes = 0
              const problem = take(whole)
              if (problem instanceof PayloadTooLarge) return yield* problem
              if (problem !== undefined) {
                refused = problem
                held.clear()
                return
              }
              start = end + 1
              if (linesSinceTurn >= linesPerTurn || bytesSinceTurn >= bytesPerTurn) {
                linesSinceTurn = 0
                bytesSinceTurn = 0
                yield* letIoRun
              }
            }
          })

        yield* Stream.runForEach(body, takeChunk)
        if (refused !== undefined) return yield* refused
        if (pending.length > 0) {
          const problem = take(Buffer.concat(pending))
          if (problem !== undefined) return yield* problem
        }
        if (held.length === 0) return yield* invalid("the body holds no datapoint: expected one JSON object per line (JSON Lines)")
        const now = yield* Clock.currentTimeMillis
        const ids = Array.from({ length: held.length }, () => uuidv7(now))
        yield* datasetStore.insertDatapointsInParts(workspace, partsOf(held, ids, datasetName, now)).pipe(Effect.mapError(storeFailure(datasetStore)))
        return ids
      })
  }
}
