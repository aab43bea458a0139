/**
 * Object storage in an S3-compatible bucket (`type = "s3_compatible"`: S3, R2, MinIO, GCS...),
 * through the AWS SDK, which is loaded only when a configuration names such a storage (so a
 * start without one does not load it; the bundle leaves it in node_modules).
 */
import * as Effect from "effect/Effect"
import type { ObjectStorageSettings } from "../../src/config/types.ts"
import { ObjectStorageFailure, type ObjectStore } from "../../src/objectStorage/storage.ts"

const messageOf = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error))

/** the store of `settings` (an `s3_compatible` kind), its client made once */
export const s3Store = (settings: ObjectStorageSettings): Effect.Effect<ObjectStore> =>
  Effect.promise(() => import("@aws-sdk/client-s3")).pipe(Effect.map((s3) => {
    const kind = settings.kind
    if (kind.type !== "s3_compatible") throw new Error(`s3Store: a ${kind.type} storage`)
    const bucket = kind.bucket_name!
    const endpoint = kind.endpoint ?? undefined
    const client = new s3.S3Client({
      region: kind.region ?? "us-east-1",
      endpoint,
      // S3-compatible servers behind one endpoint address buckets by path, not by host name
      forcePathStyle: endpoint !== undefined,
      ...(settings.s3Credentials !== undefined && { credentials: settings.s3Credentials }),
      // checksums only where S3 requires them: several S3-compatible servers refuse the SDK's default ones
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
      maxAttempts: 3,
      requestHandler: { connectionTimeout: 5_000, requestTimeout: 60_000 }
    })
    return {
      kind,
      put: (key, bytes, mimeType) =>
        Effect.tryPromise({
          try: (signal) => client.send(new s3.PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes, ContentType: mimeType }), { abortSignal: signal }),
          catch: (error) => new ObjectStorageFailure(`writing ${key} to the bucket ${bucket}: ${messageOf(error)}`)
        }).pipe(Effect.asVoid),
      get: (key) =>
        Effect.tryPromise({
          try: async (signal) => {
            try {
              const answer = await client.send(new s3.GetObjectCommand({ Bucket: bucket, Key: key }), { abortSignal: signal })
              return answer.Body === undefined ? new Uint8Array() : await answer.Body.transformToByteArray()
            } catch (error) {
              if (error instanceof s3.NoSuchKey || (error as { name?: string }).name === "NoSuchKey") return undefined
              throw error
            }
          },
          catch: (error) => new ObjectStorageFailure(`reading ${key} from the bucket ${bucket}: ${messageOf(error)}`)
        })
    } satisfies ObjectStore
  }))
