/**
 * Dynamic in-context learning examples on Postgres (`DiclExampleStore` of src/dicl/store.ts),
 * in the `dicl_example` and `dicl_write` tables (migrations/postgres/0012_dicl_examples.sql).
 * The embedding column is a pgvector `vector` where the migration could create the extension,
 * ranked with its cosine distance operator `<=>`, or a `double precision[]` whose cosine distance
 * to the query is computed in SQL (a sum over `unnest` of both arrays, divided by the stored
 * norms). The store reads the column's type once, the first time it needs it.
 *
 * The pgvector path is written for PGlite and servers with the extension; the test servers
 * of this repository have none, so the float array path is the one the suites run.
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import { Buffer } from "node:buffer"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { isSqlError, type SqlError } from "effect/sql/SqlError"
import { embeddingProblem, vectorNorm } from "../../src/dicl/examples.ts"
import { type DiclExample, type DiclNeighbor } from "../../src/dicl/store.ts"
import { type DiclExampleStore, type DiclWrite, neighborsWithin, type VectorSearch, wholeK, withWrite } from "../../src/dicl/store.ts"
import { isUuid } from "../../src/ids.ts"
import { jsonArrays } from "../../src/analytics/database.ts"
import { StoreError } from "../../src/storeError.ts"
import { writeVersions } from "../writeVersions.ts"
import { notAUuid, refused, storeError } from "./client.ts"
import { isUnstorableText, storable } from "./database.ts"

/** JSON per INSERT of examples: a size Postgres parses without strain; one row at least */
const maxChunkBytes = 8 * 1024 * 1024

interface NeighborRow {
  readonly input: unknown
  readonly output: unknown
  readonly distance: number | string
}

const exampleJson = (write: DiclWrite, example: DiclExample): Buffer => {
  if (!isUuid(example.id)) throw notAUuid(example.id)
  if (example.functionName !== write.functionName || example.variantName !== write.variantName) {
    throw refused(`example ${example.id} is of ${example.functionName}/${example.variantName}, the write of ${write.functionName}/${write.variantName}`)
  }
  const problem = embeddingProblem(example.embedding)
  if (problem !== undefined) throw refused(`example ${example.id}: ${problem}`)
  if (!Number.isSafeInteger(example.createdAt) || example.createdAt < 0) throw refused(`createdAt is not a time in epoch milliseconds: ${example.createdAt}`)
  return Buffer.from(JSON.stringify({
    id: example.id,
    input: example.input ?? null,
    output: example.output ?? null,
    embedding: example.embedding,
    embedding_norm: vectorNorm(example.embedding),
    embedding_model: example.embeddingModel,
    created_at: new Date(example.createdAt).toISOString()
  }))
}

/** a vector as an array literal (`{0.1,-2,3e-7}`), cast to float8[] in SQL */
const arrayLiteral = (vector: ReadonlyArray<number>) => `{${vector.map(String).join(",")}}`

const vectorSearchOf = (type: string): VectorSearch | undefined =>
  /^vector\b/.test(type) ? "pgvector" : type === "double precision[]" ? "float_array" : undefined

export const makePostgresDiclStore = (sql: PgClient.PgClient): DiclExampleStore => {
  let known: VectorSearch | undefined

  /** the type of the embedding column, read once (the migration chose it) */
  const vectorSearch: Effect.Effect<VectorSearch, StoreError> = Effect.suspend(() =>
    known !== undefined ? Effect.succeed(known) : sql<{ type: string }>`SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute
        WHERE attrelid = to_regclass('dicl_example') AND attname = 'embedding' AND NOT attisdropped`.pipe(
      Effect.mapError(storeError("vectorSearch")),
      Effect.flatMap((rows) => {
        if (rows.length === 0) return Effect.fail(new StoreError({ message: "postgres vectorSearch failed: relation \"dicl_example\" does not exist" }))
        const mode = vectorSearchOf(rows[0].type)
        if (mode === undefined) return Effect.fail(new StoreError({ message: `postgres vectorSearch failed: dicl_example.embedding is a ${rows[0].type}` }))
        known = mode
        return Effect.succeed(mode)
      })
    ))

  /** the ids of the workspace's writes of the variant that are read: committed, from its latest committed replace on */
  const readWrites = (workspace: string, functionName: string, variantName: string) =>
    sql`SELECT w.write_id FROM dicl_write w WHERE w.workspace = ${workspace} AND w.function_name = ${functionName} AND w.variant_name = ${variantName}
      AND w.write_id >= COALESCE((SELECT max(r.write_id) FROM dicl_write r
        WHERE r.workspace = ${workspace} AND r.function_name = ${functionName} AND r.variant_name = ${variantName} AND r.mode = 'replace'), 0)`

  // unprepared: the parameter changes every time
  const insertExamples = (mode: VectorSearch, write: DiclWrite, rows: Buffer) => {
    const values = sql`ARRAY(SELECT x::float8 FROM jsonb_array_elements_text(e->'embedding') WITH ORDINALITY AS t(x, i) ORDER BY i)`
    const embedding = mode === "pgvector" ? sql`(${values})::vector` : values
    return sql`INSERT INTO dicl_example (workspace, function_name, variant_name, write_id, id, input, output, embedding, embedding_norm, embedding_model, created_at)
      SELECT ${write.workspace}, ${write.functionName}, ${write.variantName}, ${write.id}::bigint, (e->>'id')::uuid, e->'input', e->'output', ${embedding},
        (e->>'embedding_norm')::float8, e->>'embedding_model', (e->>'created_at')::timestamptz
      FROM jsonb_array_elements(convert_from(${rows}, 'UTF8')::jsonb) AS e
      ON CONFLICT DO NOTHING`.unprepared
  }

  /**
   * The examples' JSON inserted in one transaction. Postgres cannot store U+0000, nor lone
   * surrogates in JSON: when it refuses them, the insert is made again with those characters
   * replaced by U+FFFD (as the write queue does, layers/postgres/database.ts).
   */
  const insertAll = (mode: VectorSearch, write: DiclWrite, arrays: ReadonlyArray<Buffer>) => {
    const insert = (texts: ReadonlyArray<Buffer>) =>
      sql.withTransaction(Effect.forEach(texts, (rows) => insertExamples(mode, write, rows), { discard: true }))
    return insert(arrays).pipe(
      Effect.catchIf((error): error is SqlError => isSqlError(error) && isUnstorableText(error), () => insert(arrays.map(storable))),
      Effect.mapError(storeError("stageDiclExamples"))
    )
  }

  return withWrite({
    backend: "postgres",
    vectorSearch,

    begin: (workspace, functionName, variantName, mode) => Effect.map(writeVersions(1), ([id]) => ({ id, workspace, functionName, variantName, mode })),

    // Every row is built (and checked) before anything is sent: a value refused stores nothing.
    stage: (write, examples) =>
      examples.length === 0 ? Effect.void : Effect.gen(function*() {
        const arrays = yield* Effect.try({
          try: () => jsonArrays(examples.map((example) => exampleJson(write, example)), maxChunkBytes),
          catch: (error) => error instanceof StoreError ? error : new StoreError({ message: `postgres stageDiclExamples failed: ${String(error)}` })
        })
        const mode = yield* vectorSearch
        yield* insertAll(mode, write, arrays)
      }),

    // a replace deletes what it hides (of its workspace only) in the transaction that commits it: readers see the old examples or the new ones
    commit: (write) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO dicl_write (workspace, function_name, variant_name, write_id, mode, committed_at)
            VALUES (${write.workspace}, ${write.functionName}, ${write.variantName}, ${write.id}::bigint, ${write.mode}, ${new Date(now).toISOString()}::timestamptz)
            ON CONFLICT DO NOTHING`
          if (write.mode !== "replace") return
          yield* sql`DELETE FROM dicl_example WHERE workspace = ${write.workspace} AND function_name = ${write.functionName} AND variant_name = ${write.variantName}
            AND write_id < ${write.id}::bigint`
          yield* sql`DELETE FROM dicl_write WHERE workspace = ${write.workspace} AND function_name = ${write.functionName} AND variant_name = ${write.variantName}
            AND write_id < ${write.id}::bigint`
        })).pipe(Effect.mapError(storeError("commitDiclWrite")))),

    nearest: (workspace, { functionName, variantName, embedding, k, maxDistance }) => {
      const limit = wholeK(k)
      if (limit === 0 || embeddingProblem(embedding) !== undefined) return Effect.succeed([])
      return Effect.gen(function*() {
        const mode = yield* vectorSearch
        const query = arrayLiteral(embedding)
        const ranked = mode === "pgvector"
          ? sql`SELECT input, output, id, embedding <=> (${query}::float8[])::vector AS distance FROM dicl_example
              WHERE workspace = ${workspace} AND function_name = ${functionName} AND variant_name = ${variantName} AND vector_dims(embedding) = ${embedding.length}::int
                AND write_id IN (${readWrites(workspace, functionName, variantName)})`
          : sql`SELECT input, output, id,
                1 - (SELECT sum(a * b) FROM unnest(embedding, ${query}::float8[]) AS t(a, b)) / (embedding_norm * ${vectorNorm(embedding)}::float8) AS distance
              FROM dicl_example
              WHERE workspace = ${workspace} AND function_name = ${functionName} AND variant_name = ${variantName} AND cardinality(embedding) = ${embedding.length}::int
                AND write_id IN (${readWrites(workspace, functionName, variantName)})`
        const rows = yield* sql<NeighborRow>`SELECT input, output, distance FROM (${ranked}) AS ranked
          ORDER BY distance, id LIMIT ${limit}::bigint`.unprepared.pipe(Effect.mapError(storeError("nearestDiclExamples")))
        return neighborsWithin(rows.map((row) => ({
          input: row.input,
          output: row.output as DiclNeighbor["output"],
          distance: Number(row.distance)
        })), maxDistance)
      })
    },

    count: (workspace, functionName, variantName) =>
      sql<{ count: string | number }>`SELECT count(*) AS count FROM dicl_example
        WHERE workspace = ${workspace} AND function_name = ${functionName} AND variant_name = ${variantName}
          AND write_id IN (${readWrites(workspace, functionName, variantName)})`.pipe(
        Effect.map((rows) => Number(rows[0]?.count ?? 0)),
        Effect.mapError(storeError("countDiclExamples"))
      )
  })
}
