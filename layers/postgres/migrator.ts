/**
 * The one migration sequence of Postgres: `migrations/postgres/NNNN_name.sql`, applied in
 * version order and recorded in `gateway_migrations`. Every store on Postgres (observability,
 * relational) applies the whole sequence, so a deployment may point both URLs at one database.
 * Each file runs in a transaction of its own under an advisory lock, so gateways starting
 * together apply each migration once.
 */
import type * as SqlClient from "effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { readdir, readFile } from "node:fs/promises"
import { StoreError } from "../../src/storeError.ts"
import { storeError } from "./client.ts"

const migrationsDirectory = new URL("../../migrations/postgres/", import.meta.url)

export interface Migration {
  readonly version: number
  readonly name: string
  readonly statements: ReadonlyArray<string>
}

const identifierCharacter = /[A-Za-z0-9_$]/
const dollarTag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/

/**
 * The statements of a SQL script, split at the semicolons outside of strings, quoted
 * identifiers, dollar-quoted bodies (PL/pgSQL functions) and comments; comments are dropped.
 * (The driver sends one statement per query.)
 */
export const splitStatements = (script: string): Array<string> => {
  const statements: Array<string> = []
  let current = ""
  let i = 0
  const n = script.length
  while (i < n) {
    const char = script[i]
    const next = script[i + 1]
    if (char === "-" && next === "-") {
      while (i < n && script[i] !== "\n") i++
      continue
    }
    if (char === "/" && next === "*") {
      let depth = 0
      while (i < n) {
        if (script[i] === "/" && script[i + 1] === "*") {
          depth++
          i += 2
        } else if (script[i] === "*" && script[i + 1] === "/") {
          depth--
          i += 2
          if (depth === 0) break
        } else i++
      }
      current += " "
      continue
    }
    if (char === "'" || char === "\"") {
      // E'...' strings escape with backslashes
      const escapes = char === "'" && /[Ee]/.test(script[i - 1] ?? "") && !identifierCharacter.test(script[i - 2] ?? "")
      let end = i + 1
      while (end < n && script[end] !== char) end += escapes && script[end] === "\\" ? 2 : 1
      current += script.slice(i, end + 1)
      i = end + 1
      continue
    }
    if (char === "$" && !identifierCharacter.test(script[i - 1] ?? "")) {
      const tag = dollarTag.exec(script.slice(i, i + 64))
      if (tag !== null) {
        const close = script.indexOf(tag[0], i + tag[0].length)
        const end = close === -1 ? n : close + tag[0].length
        current += script.slice(i, end)
        i = end
        continue
      }
    }
    if (char === ";") {
      statements.push(current)
      current = ""
      i++
      continue
    }
    current += char
    i++
  }
  statements.push(current)
  return statements.map((statement) => statement.trim()).filter((statement) => statement !== "")
}

/** `NNNN_name.sql` files in version order */
export const loadMigrations: Effect.Effect<ReadonlyArray<Migration>, StoreError> = Effect.tryPromise({
  try: async () => {
    const files = (await readdir(migrationsDirectory)).filter((file) => /^\d+_\w+\.sql$/.test(file)).sort()
    return Promise.all(files.map(async (file): Promise<Migration> => ({
      version: parseInt(file, 10),
      name: file.slice(0, -".sql".length),
      statements: splitStatements(await readFile(new URL(file, migrationsDirectory), "utf8"))
    })))
  },
  catch: (error) => new StoreError({ message: `postgres migrations could not be read: ${String(error)}` })
})

/**
 * Applies the pending migrations on `sql`; the names of those it applied (none when another
 * gateway applied them first).
 */
export const migrate = (sql: SqlClient.SqlClient): Effect.Effect<ReadonlyArray<string>, StoreError> => {
  /** applies one migration unless it is recorded; the advisory lock serialises concurrent gateways */
  const apply = (migration: Migration) =>
    sql.withTransaction(Effect.gen(function*() {
      // a migration may take long (and wait for another gateway's): no timeout a role or database sets applies.
      // SET LOCAL and the transaction's advisory lock end with the transaction: both hold through a pooler in transaction mode
      yield* sql`SET LOCAL statement_timeout = 0`.unprepared
      yield* sql`SELECT pg_advisory_xact_lock(hashtext('gateway_migrations'))`
      yield* sql`CREATE TABLE IF NOT EXISTS gateway_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`.unprepared
      const recorded = yield* sql`SELECT 1 FROM gateway_migrations WHERE version = ${migration.version}`
      if (recorded.length > 0) return false
      for (const statement of migration.statements) yield* sql.unsafe(statement).unprepared
      yield* sql`INSERT INTO gateway_migrations (version, name) VALUES (${migration.version}, ${migration.name})`
      return true
    }))

  return Effect.gen(function*() {
    const applied: Array<string> = []
    for (const migration of yield* loadMigrations) {
      const done = yield* apply(migration).pipe(Effect.mapError(storeError(`migration ${migration.name}`)))
      if (done) applied.push(migration.name)
    }
    return applied
  })
}
