/**
 * The split of a Postgres migration file into statements (layers/postgres/migrator.ts): at
 * the semicolons outside of strings, quoted identifiers, dollar-quoted bodies and comments.
 */
import { describe, expect, it } from "vitest"
import { splitStatements } from "../../layers/postgres/migrator.ts"

describe("splitStatements", () => {
  it("splits at semicolons and drops comments and empty statements", () => {
    expect(splitStatements("-- a comment; not a statement\nCREATE TABLE a (x int);\n\n;  /* block; */ CREATE INDEX i ON a (x) ;\n-- end")).toEqual([
      "CREATE TABLE a (x int)",
      "CREATE INDEX i ON a (x)"
    ])
  })

  it("keeps semicolons inside strings, quoted identifiers and dollar-quoted function bodies", () => {
    const fn = "CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $$\nBEGIN\n  -- a comment inside;\n  RETURN 1;\nEND\n$$"
    const tagged = "CREATE FUNCTION g() RETURNS text LANGUAGE sql AS $body$ SELECT 'a;$$b' $body$"
    expect(splitStatements(`${fn};\n${tagged};\nSELECT 'it''s; fine', E'esc\\'; still', "odd;name" FROM t;`)).toEqual([
      fn,
      tagged,
      "SELECT 'it''s; fine', E'esc\\'; still', \"odd;name\" FROM t"
    ])
  })

  it("does not take a positional parameter or an identifier with $ for a dollar quote", () => {
    expect(splitStatements("SELECT $1; SELECT a$b$ FROM t; SELECT 2")).toEqual(["SELECT $1", "SELECT a$b$ FROM t", "SELECT 2"])
  })

  it("handles nested block comments", () => {
    expect(splitStatements("/* outer /* inner; */ still; */ SELECT 1; SELECT 2")).toEqual(["SELECT 1", "SELECT 2"])
  })
})
