/**
 * Dynamic in-context learning examples on ClickHouse (`DiclExampleStore` of src/dicl/store.ts),
 * in the `DiclExample` and `DiclWrite` tables (migrations/clickhouse/0009_dicl_examples.sql).
 * Embeddings are Array(Float32) with their norm; the cosine distance to a query is computed
 * with arraySum/arrayMap, which 18.16 and current releases both have (`cosineDistance` came
 * later), on the variant's rows of as many dimensions only: the distance is computed in an outer
 * query over the inner query's rows, so a row of other dimensions never reaches the arrayMap
 * (which refuses arrays of different sizes), whatever order the server evaluates conditions in.
 */
import { Buffer } from "node:buffer"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { embeddingProblem, vectorNorm } from "../../src/dicl/examples.ts"
import { type DiclExample, type DiclNeighbor } from "../../src/dicl/store.ts"
import { type DiclExampleStore, type DiclWrite, neighborsWithin, wholeK, withWrite } from "../../src/dicl/store.ts"
import { writeVersions } from "../writeVersions.ts"
import type { ClickHouse } from "./client.ts"
import { text } from "./rows.ts"
import { refused, sqlInteger, sqlString, sqlUuid } from "./sql.ts"

interface NeighborRow {
  readonly input: string
  readonly output: string
  readonly distance: number
}

/** a finite number as a Float64 literal (an integer gets a decimal point, so that an array of them is Array(Float64)) */
const sqlFloat = (value: number) => {
  if (!Number.isFinite(value)) throw refused(`not a finite number: ${value}`)
  return Number.isInteger(value) && Math.abs(value) < 1e15 ? value.toFixed(1) : String(value)
}

const exampleLine = (write: DiclWrite, example: DiclExample): Buffer => {
  sqlUuid(example.id)
  if (example.functionName !== write.functionName || example.variantName !== write.variantName) {
    throw refused(`example ${example.id} is of ${example.functionName}/${example.variantName}, the write of ${write.functionName}/${write.variantName}`)
  }
  const problem = embeddingProblem(example.embedding)
  if (problem !== undefined) throw refused(`example ${example.id}: ${problem}`)
  // the norm of the values as the column holds them (float32), so that an example is at distance ~0 from itself
  const stored = example.embedding.map(Math.fround)
  if (embeddingProblem(stored) !== undefined) throw refused(`example ${example.id}: the embedding does not fit float32`)
  return Buffer.from(JSON.stringify({
    workspace: write.workspace,
    function_name: text(write.functionName),
    variant_name: text(write.variantName),
    write_id: write.id,
    id: example.id,
    input: JSON.stringify(example.input) ?? "null",
    output: JSON.stringify(example.output) ?? "null",
    embedding: stored,
    embedding_norm: vectorNorm(stored),
    embedding_model: text(example.embeddingModel),
    created_at_ms: example.createdAt
  }))
}

/** the ids of the workspace's writes of the variant that are read: committed, from its latest committed replace on */
const readWrites = (workspace: string, functionName: string, variantName: string) => {
  const variant = `workspace = ${sqlString(workspace)} AND function_name = ${sqlString(text(functionName))} AND variant_name = ${sqlString(text(variantName))}`
  return `SELECT write_id FROM DiclWrite WHERE ${variant} AND write_id >= ` +
    `(SELECT max(write_id) FROM DiclWrite WHERE ${variant} AND mode = 'replace')`
}

const variantRows = (workspace: string, functionName: string, variantName: string) =>
  `workspace = ${sqlString(workspace)} AND function_name = ${sqlString(text(functionName))} AND variant_name = ${sqlString(text(variantName))} ` +
  `AND write_id IN (${readWrites(workspace, functionName, variantName)})`

export const makeClickHouseDiclStore = ({ run, select, insert, command }: ClickHouse): DiclExampleStore => {
  /**
   * After a replace, the rows it hides (of earlier writes, committed or not) are deleted by a
   * mutation, which ClickHouse runs in the background. Nothing reads them any more: a failure is
   * logged, not the write's. Only the write's workspace's rows: a replace in one workspace never
   * deletes another's examples.
   */
  const deleteBefore = (write: DiclWrite) => {
    const condition = `workspace = ${sqlString(write.workspace)} AND function_name = ${sqlString(text(write.functionName))} AND variant_name = ${sqlString(text(write.variantName))} ` +
      `AND write_id < ${sqlInteger(write.id)}`
    return run("deleteReplacedDiclExamples", async (signal) => {
      for (const table of ["DiclExample", "DiclWrite"]) {
        await command(`ALTER TABLE ${table} DELETE WHERE ${condition}`, signal)
      }
    }).pipe(Effect.catch((error) => Effect.logWarning(`dicl: examples replaced by write ${write.id} were not deleted: ${error.message}`)))
  }

  return withWrite({
    backend: "clickhouse",
    vectorSearch: Effect.succeed("clickhouse"),

    begin: (workspace, functionName, variantName, mode) => Effect.map(writeVersions(1), ([id]) => ({ id, workspace, functionName, variantName, mode })),

    // Every row is built (and checked) before anything is sent: a value refused stores nothing.
    stage: (write, examples) =>
      examples.length === 0 ? Effect.void : run("stageDiclExamples", async (signal) => {
        const lines = examples.map((example) => exampleLine(write, example))
        await insert("DiclExample", lines, signal)
      }),

    commit: (write) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        run("commitDiclWrite", async (signal) => {
          const line = Buffer.from(JSON.stringify({
            workspace: write.workspace,
            function_name: text(write.functionName),
            variant_name: text(write.variantName),
            write_id: write.id,
            mode: write.mode,
            committed_at_ms: now
          }))
          await insert("DiclWrite", [line], signal)
        })).pipe(
          Effect.andThen(write.mode === "replace" ? deleteBefore(write) : Effect.void)
        ),

    nearest: (workspace, { functionName, variantName, embedding, k, maxDistance }) => {
      const limit = wholeK(k)
      if (limit === 0 || embeddingProblem(embedding) !== undefined) return Effect.succeed([])
      return run("nearestDiclExamples", async (signal) => {
        const query = `[${embedding.map(sqlFloat).join(", ")}]`
        const rows = await select<NeighborRow>(
          `SELECT input, output, ` +
            `1 - arraySum(arrayMap((x, y) -> x * y, embedding, ${query})) / (embedding_norm * ${sqlFloat(vectorNorm(embedding))}) AS distance ` +
            `FROM (SELECT input, output, embedding, embedding_norm, toString(id) AS id_text FROM DiclExample ` +
            `WHERE ${variantRows(workspace, functionName, variantName)} AND length(embedding) = ${sqlInteger(embedding.length)} LIMIT 1 BY id_text) ` +
            `ORDER BY distance ASC, id_text ASC LIMIT ${sqlInteger(limit)}`,
          signal
        )
        return neighborsWithin(rows.map((row): DiclNeighbor => ({
          input: JSON.parse(row.input),
          output: JSON.parse(row.output),
          distance: Number(row.distance)
        })), maxDistance)
      })
    },

    count: (workspace, functionName, variantName) =>
      run("countDiclExamples", async (signal) => {
        const rows = await select<{ count: string }>(
          `SELECT uniqExact(id) AS count FROM DiclExample WHERE ${variantRows(workspace, functionName, variantName)}`,
          signal
        )
        return Number(rows[0]?.count ?? 0)
      })
  })
}
