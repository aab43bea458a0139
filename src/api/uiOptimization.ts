/**
 * `GET /v1/ui/optimization/gepa/{task_id}/export`: the configuration files that adopt the
 * variants a completed GEPA task found, the same files `gateway optimize export` writes
 * (`gateway.toml` with the variant tables, a file per template at the path it names), as JSON
 * for the UI to offer as downloads. JSON rather than an archive: no archive library is a
 * dependency, and the UI shows each file before it is saved.
 */
import * as Schema from "effect/Schema"

export const UiExportedFile = Schema.Struct({
  path: Schema.String.annotate({ description: "relative to the folder of the configuration: `gateway.toml`, or `<function>/<variant>/<template>.minijinja`" }),
  content: Schema.String
}).annotate({ identifier: "UiExportedFile" })

export const UiGepaExport = Schema.Struct({
  task_id: Schema.String,
  function_name: Schema.String,
  /** the new variants the files add (none when the task found none better) */
  variants: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
  files: Schema.Array(UiExportedFile).annotate({ description: "`gateway.toml` first, whose template paths point to the other files" })
}).annotate({ identifier: "UiGepaExport" })
export type UiGepaExport = typeof UiGepaExport.Type
export type UiExportedFile = typeof UiExportedFile.Type
