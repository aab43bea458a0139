/**
 * `[object_storage]` (TensorZero's keys, tagged by `type`) -> where input files are written:
 * `filesystem` (a folder), `s3_compatible` (a bucket), or `disabled` (files are not kept).
 * S3 keys are read as TensorZero reads them: `S3_ACCESS_KEY_ID` and `S3_SECRET_ACCESS_KEY`,
 * else the AWS SDK's default chain.
 */
import * as Schema from "effect/Schema"
import { type BuildContext, tableDecoder } from "./context.ts"
import type { ObjectStorageSettings } from "./types.ts"

const Filesystem = Schema.Struct({ type: Schema.Literal("filesystem"), path: Schema.String })
const S3Compatible = Schema.Struct({
  type: Schema.Literal("s3_compatible"),
  bucket_name: Schema.optional(Schema.String),
  region: Schema.optional(Schema.String),
  endpoint: Schema.optional(Schema.String),
  allow_http: Schema.optional(Schema.Boolean)
})
const Disabled = Schema.Struct({ type: Schema.Literal("disabled") })

const decoders = {
  filesystem: tableDecoder(Filesystem),
  s3_compatible: tableDecoder(S3Compatible),
  disabled: tableDecoder(Disabled)
} as const

const here = ["object_storage"]

const s3Settings = (context: BuildContext, raw: typeof S3Compatible.Type): ObjectStorageSettings | undefined => {
  let valid = true
  if (raw.bucket_name === undefined || raw.bucket_name === "") {
    context.report([...here, "bucket_name"], "missing field (the bucket input files are written to)")
    valid = false
  }
  if (raw.endpoint !== undefined) {
    const url = URL.canParse(raw.endpoint) ? new URL(raw.endpoint) : undefined
    if (url === undefined || (url.protocol !== "https:" && url.protocol !== "http:")) {
      context.report([...here, "endpoint"], `not an http(s) URL: ${raw.endpoint}`)
      valid = false
    } else if (url.protocol === "http:" && raw.allow_http !== true) {
      context.report([...here, "endpoint"], "an http:// endpoint needs allow_http = true (the keys and files would cross the network unencrypted)")
      valid = false
    }
  }
  const env = context.input.env
  const accessKeyId = env.S3_ACCESS_KEY_ID
  const secretAccessKey = env.S3_SECRET_ACCESS_KEY
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    context.report(here, "S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are set together or not at all (neither: the AWS default chain)")
    valid = false
  }
  if (!valid) return undefined
  return {
    kind: {
      type: "s3_compatible",
      bucket_name: raw.bucket_name ?? null,
      region: raw.region ?? null,
      endpoint: raw.endpoint ?? null,
      allow_http: raw.allow_http ?? null
    },
    s3Credentials: accessKeyId !== undefined && secretAccessKey !== undefined ? { accessKeyId, secretAccessKey } : undefined
  }
}

/** `table` is `[object_storage]` as written, undefined when absent */
export const buildObjectStorage = (context: BuildContext, table: Readonly<Record<string, unknown>> | undefined): ObjectStorageSettings | undefined => {
  if (table === undefined) return undefined
  const type = table.type
  if (type === undefined) {
    context.report([...here, "type"], `missing field ("filesystem", "s3_compatible" or "disabled")`)
    return undefined
  }
  if (type !== "filesystem" && type !== "s3_compatible" && type !== "disabled") {
    context.report([...here, "type"], `expected "filesystem", "s3_compatible" or "disabled", got ${JSON.stringify(type)}`)
    return undefined
  }
  switch (type) {
    case "filesystem": {
      const raw = context.decodeAt(decoders.filesystem, table, here)
      if (raw === undefined) return undefined
      if (raw.path === "") {
        context.report([...here, "path"], "empty: the folder input files are written to")
        return undefined
      }
      return { kind: { type: "filesystem", path: raw.path } }
    }
    case "s3_compatible": {
      const raw = context.decodeAt(decoders.s3_compatible, table, here)
      return raw === undefined ? undefined : s3Settings(context, raw)
    }
    case "disabled":
      return context.decodeAt(decoders.disabled, table, here) === undefined ? undefined : { kind: { type: "disabled" } }
  }
}
