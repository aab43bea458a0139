/**
 * `[object_storage]` (TensorZero's keys): each kind loads into the storage kind stored inferences
 * name, S3 keys come from S3_ACCESS_KEY_ID / S3_SECRET_ACCESS_KEY, and every mistake is an
 * error naming its key.
 */
import { describe, expect, it } from "vitest"
import { buildErrors, buildOk, configPath as F } from "./fixtures.ts"

describe("[object_storage]", () => {
  it("absent: no storage (files stay inline)", () => {
    expect(buildOk("").objectStorage).toBeUndefined()
  })

  it("filesystem, disabled", () => {
    expect(buildOk(`[object_storage]\ntype = "filesystem"\npath = "/data/files"`).objectStorage).toEqual({
      kind: { type: "filesystem", path: "/data/files" }
    })
    expect(buildOk(`[object_storage]\ntype = "disabled"`).objectStorage).toEqual({ kind: { type: "disabled" } })
  })

  it("s3_compatible: absent options are null (as TensorZero stores them); the keys from S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY", () => {
    const toml = `[object_storage]\ntype = "s3_compatible"\nbucket_name = "files"`
    expect(buildOk(toml).objectStorage).toEqual({
      kind: { type: "s3_compatible", bucket_name: "files", region: null, endpoint: null, allow_http: null },
      s3Credentials: undefined
    })
    const withKeys = buildOk(`${toml}\nregion = "eu-west-1"\nendpoint = "http://127.0.0.1:9000"\nallow_http = true`, {
      env: { S3_ACCESS_KEY_ID: "id", S3_SECRET_ACCESS_KEY: "secret" }
    })
    expect(withKeys.objectStorage).toEqual({
      kind: { type: "s3_compatible", bucket_name: "files", region: "eu-west-1", endpoint: "http://127.0.0.1:9000", allow_http: true },
      s3Credentials: { accessKeyId: "id", secretAccessKey: "secret" }
    })
  })

  it("errors name the key", () => {
    expect(buildErrors(`[object_storage]\ntype = "filesystem"`)).toEqual([`${F}: object_storage.path: missing field`])
    expect(buildErrors(`[object_storage]\ntype = "filesystem"\npath = ""`)).toEqual([
      `${F}: object_storage.path: empty: the folder input files are written to`
    ])
    expect(buildErrors(`[object_storage]\npath = "/x"`)).toEqual([
      `${F}: object_storage.type: missing field ("filesystem", "s3_compatible" or "disabled")`
    ])
    expect(buildErrors(`[object_storage]\ntype = "gcs"`)).toEqual([
      `${F}: object_storage.type: expected "filesystem", "s3_compatible" or "disabled", got "gcs"`
    ])
    expect(buildErrors(`[object_storage]\ntype = "disabled"\npath = "/x"`)).toEqual([`${F}: object_storage.path: unknown field`])
    expect(buildErrors(`[object_storage]\ntype = "filesystem"\npath = 3`)[0]).toMatch(/^\/cfg\/gateway\.toml: object_storage\.path: /)
    expect(buildErrors(`[object_storage]\ntype = "s3_compatible"\nregion = "us-east-1"`)).toEqual([
      `${F}: object_storage.bucket_name: missing field (the bucket input files are written to)`
    ])
    expect(buildErrors(`[object_storage]\ntype = "s3_compatible"\nbucket_name = "b"\nendpoint = "http://127.0.0.1:9000"`)).toEqual([
      `${F}: object_storage.endpoint: an http:// endpoint needs allow_http = true (the keys and files would cross the network unencrypted)`
    ])
    expect(buildErrors(`[object_storage]\ntype = "s3_compatible"\nbucket_name = "b"\nendpoint = "not a url"`)).toEqual([
      `${F}: object_storage.endpoint: not an http(s) URL: not a url`
    ])
    expect(buildErrors(`[object_storage]\ntype = "s3_compatible"\nbucket_name = "b"`, { env: { S3_ACCESS_KEY_ID: "id" } })).toEqual([
      `${F}: object_storage: S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are set together or not at all (neither: the AWS default chain)`
    ])
  })
})
