/**
 * What every call of one configured Gemini provider is sent with (GeminiTarget), with where its
 * batches go (AI Studio's or Vertex AI's target): settled at start-up by index.ts, read by the
 * request builder and the batch hooks, which need not import each other.
 */
import type { StorageLocation } from "../gcp/cloudStorage.ts"

/** What every call of one configured Gemini provider is sent with, settled at start-up. */
export interface GeminiTarget {
  /** the provider type, for messages */
  readonly type: string
  /** the model's resource URL, before `:generateContent` */
  readonly modelUrl: string
  /** the URLs Gemini fetches itself as `fileData` (AI Studio: its File API only; Vertex: gs:// and http(s)) */
  readonly takesFileUri: (url: string) => boolean
  /** why calls cannot be made (settings missing); every call fails with it */
  readonly problem?: string | undefined
  /** where its batches go (`aiStudioBatch.ts`, `vertexBatch.ts`) */
  readonly batch?: AiStudioBatchTarget | VertexBatchTarget | undefined
}

/** What an AI Studio provider's batches need besides the model's URL. */
export interface AiStudioBatchTarget {
  readonly api: "ai_studio"
  /** `api_base` with its trailing slash: batch names are relative to it */
  readonly apiBase: string
}

/** What a Vertex provider's batches need, or why it can make none. */
export type VertexBatchTarget =
  | {
    readonly api: "vertex"
    /** `.../projects/<p>/locations/<l>/batchPredictionJobs` */
    readonly jobsUrl: string
    /** the Vertex address job names are relative to (`api_base`, or the location's host) */
    readonly apiBase: string
    /** `publishers/google/models/<model>` */
    readonly model: string
    /** where input files go: a bucket and a folder in it */
    readonly input: StorageLocation
    readonly outputUriPrefix: string
    readonly storageApiBase: string
  }
  | { readonly api: "vertex"; readonly problem: string }
