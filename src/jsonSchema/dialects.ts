/**
 * The JSON Schema dialects the gateway validates, chosen by a schema's `$schema`: what clients
 * generate and providers accept. Zod 4 and Pydantic 2 write 2020-12 (Pydantic without
 * declaring it), zod-to-json-schema and the openai SDK's helpers draft-07; a schema that
 * declares none is draft-07. Each dialect is one of the `ajv` package's classes; draft-04
 * would need another package (`ajv-draft-04`), so it is refused like any unknown `$schema`.
 */
import { Ajv, type Options } from "ajv"
import { Ajv2019 } from "ajv/dist/2019.js"
import { Ajv2020 } from "ajv/dist/2020.js"
import draft06MetaSchema from "ajv/dist/refs/json-schema-draft-06.json" with { type: "json" }
import { quoted } from "../untrusted.ts"

export interface Dialect {
  readonly name: string
  /** the `$schema` URI of its meta-schema, as ajv knows it */
  readonly metaSchema: string
  readonly ajvClass: new(options: Options) => Ajv
  /** a meta-schema the class does not hold by default */
  readonly addedMetaSchema?: Record<string, unknown>
}

const draft07: Dialect = { name: "draft-07", metaSchema: "http://json-schema.org/draft-07/schema#", ajvClass: Ajv }

/** Most recent first: the order the accepted URIs are listed in. */
export const dialects: ReadonlyArray<Dialect> = [
  { name: "2020-12", metaSchema: "https://json-schema.org/draft/2020-12/schema", ajvClass: Ajv2020 },
  { name: "2019-09", metaSchema: "https://json-schema.org/draft/2019-09/schema", ajvClass: Ajv2019 },
  draft07,
  // ajv validates draft-06 schemas with its draft-07 class and the draft-06 meta-schema
  { name: "draft-06", metaSchema: "http://json-schema.org/draft-06/schema#", ajvClass: Ajv, addedMetaSchema: draft06MetaSchema }
]

/** A `$schema` URI without its scheme and empty fragment: clients write http or https, with or without `#`. */
const normalized = (uri: string): string => uri.replace(/^https?:\/\//, "").replace(/#$/, "")

const byUri = new Map(dialects.map((dialect) => [normalized(dialect.metaSchema), dialect]))

const accepted = dialects.map((dialect) => dialect.metaSchema).join(", ")

/** The dialect a schema declares with `$schema` (draft-07 when it declares none), or why it cannot be validated. */
export const dialectOf = (schema: Record<string, unknown>): Dialect | { readonly error: string } => {
  const declared = schema.$schema
  if (declared === undefined) return draft07
  if (typeof declared !== "string") return { error: `$schema: expected the URI of a JSON Schema dialect (${accepted})` }
  return byUri.get(normalized(declared)) ?? {
    error: `$schema ${quoted(declared, 100)} is not a JSON Schema dialect the gateway validates; declare one of ${accepted} (none means draft-07)`
  }
}

/** An ajv instance of the dialect; with `meta` (the default), it holds the dialect's meta-schema to check schemas against. */
export const makeAjv = (dialect: Dialect, options: Options): Ajv => {
  const ajv = new dialect.ajvClass(options)
  // `id` is draft-04's `$id`, no keyword in these dialects (an annotation, as providers read
  // it), but ajv refuses it outright; zod 4 writes it in `$defs` entries (`.meta({ id })`)
  ajv.removeKeyword("id")
  if (dialect.addedMetaSchema !== undefined && options.meta !== false) ajv.addMetaSchema(dialect.addedMetaSchema)
  return ajv
}

/** One value per dialect, made the first time the dialect is used (a meta-schema compiles in ~20 ms). */
export const perDialect = <A>(make: (dialect: Dialect) => A): (dialect: Dialect) => A => {
  const made = new Map<Dialect, A>()
  return (dialect) => {
    let value = made.get(dialect)
    if (value === undefined) {
      value = make(dialect)
      made.set(dialect, value)
    }
    return value
  }
}
