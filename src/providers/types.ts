/**
 * What a provider type is to the inference path: a schema for its configuration table, a
 * default credential location, and a client that answers `ModelRequest`s. HTTP providers are
 * codecs (`codec.ts`) made into clients by the one runner (`wireProvider.ts`); the built-in `dummy`
 * answers in process. Adding a provider means adding a folder and one line to `registry.ts`.
 */
import type * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import type * as Arr from "effect/Array"
import type * as Cause from "effect/Cause"
import type { CredentialLocation } from "../config/credentials.ts"
import type { ProviderConfig } from "../config/types.ts"
import type { InvalidRequest } from "../errors.ts"
import type { ExtraBodyEdit, ExtraHeaderEdit } from "../inference/extraBody.ts"
import type { ModelRequest, ProviderChunk, ProviderResponse } from "../inference/types.ts"
import type { HttpTransport } from "../transport.ts"
import type { ApiType, BatchHandle, CallerContext, EmbeddingRequest, EmbeddingResponse } from "./codec.ts"
import type { ProviderFailure } from "./failure.ts"

/** Everything a provider needs for one call, already resolved by the inference path (an embedding call's request is an `EmbeddingRequest`). */
export interface ProviderCall<Request = ModelRequest> {
  readonly request: Request
  readonly apiKey: string | undefined
  /** `apiKey` is one the request gave (`dynamic::`), not the operator's */
  readonly credentialFromRequest?: boolean | undefined
  /** configured then request-level edits that apply to this call, in order */
  readonly extraBody: ReadonlyArray<ExtraBodyEdit>
  readonly extraHeaders: ReadonlyArray<ExtraHeaderEdit>
  readonly modelName: string
  readonly providerName: string
  /** the family of API the provider speaks (`families.ts`): which of a surface's built-in tools it takes; absent: "other" */
  readonly family?: string | undefined
  /** `gateway::model_name::<model>::provider_name::<provider>`, the scope of `unknown` blocks */
  readonly qualifiedName: string
  /** what a provider that forwards calls to another gateway sends on (`CallerContext`); absent: nothing */
  readonly caller?: CallerContext | undefined
  /** the provider's configured `provider_tools`, sent before the request's own; absent: none */
  readonly providerTools?: ReadonlyArray<unknown> | undefined
}

/**
 * A streamed answer: the request as sent, and the chunks as they arrive, pulled one read's
 * worth at a time. A pull, not an Effect `Stream`: the streaming path does its per-read work in
 * plain code inside one pull (see src/streams.ts).
 */
export interface ProviderStream {
  readonly rawRequest: string
  readonly next: ChunkPull
  /** stops the stream and releases its connection; run once it ended or is abandoned (more than once is harmless) */
  readonly close: Effect.Effect<void>
}

/** the next chunks of a stream (what one read brought), failing with `Cause.Done` at its end */
export type ChunkPull = Effect.Effect<Arr.NonEmptyReadonlyArray<ProviderChunk>, ProviderFailure | Cause.Done>

/** An embedding answer: the vectors and usage, with the request as sent and the answer as received. */
export interface ProviderEmbeddings extends EmbeddingResponse {
  readonly rawRequest: string
  readonly rawResponse: string
}

/** What a provider type with embeddings offers besides inference (`EmbeddingsHooks` for codecs). */
export interface EmbeddingClient {
  readonly embed: (call: ProviderCall<EmbeddingRequest>) => Effect.Effect<ProviderEmbeddings, ProviderFailure | InvalidRequest, HttpTransport>
  /** reads a stored raw answer again (a cache hit replays the answer it stored) */
  readonly parse: (rawResponse: string) => EmbeddingResponse | ProviderFailure
}

/** One request of a batch: its id within the batch (the gateway's inference id) and its call. */
export interface BatchCall {
  readonly id: string
  readonly call: ProviderCall
}

/** A batch the provider accepted: how to find it again, and each request's body as sent (its raw request), in order. */
export interface StartedBatch {
  readonly handle: BatchHandle
  readonly rawRequests: ReadonlyArray<string>
}

/** What the gateway needs to poll a batch: the credential and the scope of `unknown` blocks of the calls that made it. */
export interface BatchPollCall {
  readonly apiKey: string | undefined
  readonly qualifiedName: string
  readonly extraHeaders: ReadonlyArray<ExtraHeaderEdit>
}

/** One request of a finished batch: its answer read as a single call's would be, or why it has none. */
export type BatchResult =
  | { readonly id: string; readonly ok: true; readonly response: ProviderResponse }
  | { readonly id: string; readonly ok: false; readonly message: string }

export type BatchOutcome =
  | { readonly status: "pending" }
  | { readonly status: "failed"; readonly message: string }
  | { readonly status: "completed"; readonly results: ReadonlyArray<BatchResult> }

/** What a provider type with a batch API offers (`BatchHooks` for codecs). */
export interface BatchClient {
  /** every call is to this provider, with the same credential (the first call's) */
  readonly start: (calls: ReadonlyArray<BatchCall>) => Effect.Effect<StartedBatch, ProviderFailure | InvalidRequest, HttpTransport>
  readonly poll: (handle: BatchHandle, call: BatchPollCall) => Effect.Effect<BatchOutcome, ProviderFailure, HttpTransport>
}

/**
 * A provider failure falls back to the next provider; an InvalidRequest (a request's own
 * `extra_body` edit that does not fit this provider's body) ends the inference with a 400.
 */
export interface ProviderClient {
  /** the API its inference calls go through; `chat_completions` when not said (every type but the Responses API) */
  readonly apiType?: ApiType | undefined
  readonly infer: (call: ProviderCall) => Effect.Effect<ProviderResponse, ProviderFailure | InvalidRequest, HttpTransport>
  /** fails before the stream starts for errors the provider reports up front */
  readonly stream: (call: ProviderCall) => Effect.Effect<ProviderStream, ProviderFailure | InvalidRequest, HttpTransport>
  /** present for the types that have embeddings (`ProviderDefinition.embeddings`) */
  readonly embeddings?: EmbeddingClient | undefined
  /** present for the types that have a batch API (`ProviderDefinition.batch`) */
  readonly batch?: BatchClient | undefined
  /** how many input tokens the call's request would take, asked of the provider; present for the types that can say (`ProviderDefinition.countTokens`) */
  readonly countTokens?: ((call: ProviderCall) => Effect.Effect<number, ProviderFailure | InvalidRequest, HttpTransport>) | undefined
}

export interface ProviderDefinition {
  readonly type: string
  readonly defaultCredential: CredentialLocation
  /** whether a provider table of this type must have `model_name` */
  readonly requiresModelName: boolean
  /** the fields of a provider table specific to this type, besides `providerCommonFields` (decoded by the configuration) */
  readonly settingsFields: Schema.Struct.Fields
  /** whether its clients answer embedding requests (`[embedding_models]` accepts only such types) */
  readonly embeddings?: boolean | undefined
  /** whether its clients run batches (`/batch_inference` refuses a variant whose provider's type has none) */
  readonly batch?: boolean | undefined
  /** whether its clients count tokens (`ProviderClient.countTokens`): Anthropic's `count_tokens` is served by such types only */
  readonly countTokens?: boolean | undefined
  /** why a configured provider's settings can make no call, checked at start-up */
  readonly settingsProblem?: ((config: ProviderConfig) => string | undefined) | undefined
  /**
   * why a `<type>::<model>` short-hand's model names nothing this type can call (a Vertex
   * resource name whose location is no location): a short-hand's model comes from a request,
   * and no client is made of it (`shorthandProblem` in `registry.ts`)
   */
  readonly modelNameProblem?: ((model: string) => string | undefined) | undefined
  /** at start-up for configured providers, on first use for `<type>::<model>` short-hands */
  readonly make: (config: ProviderConfig) => ProviderClient
}

export const qualifiedProviderName = (modelName: string, providerName: string): string =>
  `gateway::model_name::${modelName}::provider_name::${providerName}`

/** The model and provider a qualified provider name names, when it is one. */
export const parseQualifiedProviderName = (
  name: string
): { readonly modelName: string; readonly providerName: string } | undefined => {
  const match = /^gateway::model_name::(.+)::provider_name::(.+)$/.exec(name)
  return match === null ? undefined : { modelName: match[1], providerName: match[2] }
}
