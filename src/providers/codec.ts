/**
 * A provider that speaks HTTP, as a codec: pure functions between the gateway's shapes
 * (`ModelRequest`, `ProviderResponse`, `ProviderChunk`) and the provider's wire format. It holds
 * no transport code: the runner (`wireProvider.ts`) does the rest once for every codec (credentials,
 * `extra_body`/`extra_headers`, `provider_tools` scoping, the HTTP call, stream framing, status
 * checks, error mapping and the redaction of keys). Adding a provider is writing one of these,
 * or, for a server that speaks OpenAI's Chat Completions, declaring it (`chatCompletionsFamily.ts`).
 */
import type * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import type { CredentialLocation, Environment } from "../config/credentials.ts"
import type { ExtraBodyEdit, ExtraHeaderEdit } from "../inference/extraBody.ts"
import type { FinishReason, ModelRequest, OutputBlock, ProviderChunk, ProviderStop, Usage } from "../inference/types.ts"
import type { HttpCall, HttpTransport } from "../transport.ts"
import type { InvalidRequest } from "../errors.ts"
import type { ProviderFailure } from "./failure.ts"

/** A JSON request body as a codec builds it; the runner edits it (`extra_body`) before it is serialised. */
export type WireBody = Record<string, unknown>

/**
 * A request the provider cannot express, or an answer the gateway cannot read: the call fails
 * with this explanation (a failure of this provider: the next one may serve the request).
 * A value, not a throw: codec functions return it in place of their result.
 */
export class WireProblem {
  readonly message: string
  constructor(message: string) {
    this.message = message
  }
}

/**
 * The `model_provider_name` a codec gives the `unknown` output blocks it reads when it does not
 * use the call's name: the runner fills in the call's qualified name, so they go back only to
 * the provider that made them.
 */
export const unscopedProvider = ""

/** What a codec is told about one call besides its `ModelRequest`. */
export interface WireCall<Target> {
  /** what the codec derived from the provider's settings at start-up */
  readonly target: Target
  readonly stream: boolean
  /** `gateway::model_name::<model>::provider_name::<provider>`: `unknown` blocks scoped to another provider are left out */
  readonly qualifiedName: string
  /** the request's `provider_tools` that apply to this model and provider (the runner scoped them), to send as they are */
  readonly providerTools: ReadonlyArray<unknown>
  /** what the request brings besides its model call, for a codec that forwards it to another gateway (`gateway`); absent: nothing */
  readonly caller?: CallerContext | undefined
}

/**
 * What a call forwards of its request besides the `ModelRequest`, for the one type that sends
 * it on (`gateway`: another gateway runs the call's provider): the caller's tags, `dryrun` and
 * dynamic credentials (the call's own key left out), and the edits of the variant and of the
 * request that apply to the call (not applied to the call's own body by a codec that `forwardsCallerEdits`).
 */
export interface CallerContext {
  readonly tags: Readonly<Record<string, string>>
  /** the request stores nothing: neither must the other gateway */
  readonly dryrun: boolean
  readonly credentials: Readonly<Record<string, string>>
  readonly extraBody: ReadonlyArray<ExtraBodyEdit>
  readonly extraHeaders: ReadonlyArray<ExtraHeaderEdit>
}

/** A whole answer, read: the runner adds the raw request and response. */
export interface ParsedResponse {
  readonly output: ReadonlyArray<OutputBlock>
  readonly usage: Usage
  readonly finishReason?: FinishReason | undefined
  readonly providerStop?: ProviderStop | undefined
}

/**
 * How a streamed body is cut into the provider's events. Server-Sent Events today (`sse.ts`);
 * AWS's binary event stream (Bedrock) is another framing with its own `Event` (headers and a
 * payload) and content type (`aws/eventStream.ts`).
 */
export interface StreamFraming<Event> {
  /** the content type of a stream in this framing (`text/event-stream`); an answer of another type is read as an error */
  readonly contentType: string
  /** a cutter for one stream (it keeps what an event split across reads left over) */
  readonly cutter: () => EventCutter<Event>
}

/** Cuts one body into events, read by read, in plain code (no stream machinery per event). */
export interface EventCutter<Event> {
  /**
   * Pushes the events completed by `bytes` onto `out`; true once the framing's end marker came
   * (what follows it is ignored, and the body needs no further reading).
   */
  readonly feed: (bytes: Uint8Array, out: Array<Event>) => boolean
  /** pushes what the end of the body completes or leaves broken (a message cut short) */
  readonly end: (out: Array<Event>) => void
}

/** Parses one streamed event; made once per stream, so it may remember earlier events (tool call ids by index). */
export type StreamEventParser<Event> = (event: Event) => ProviderChunk | WireProblem

/** Embeddings (`POST /embeddings` and the like): declared for the codecs that have them. */
export interface EmbeddingsHooks<Target> {
  readonly url: (target: Target) => string
  /** `caller`: as in `WireCall` (only `gateway` reads it) */
  readonly body: (target: Target, request: EmbeddingRequest, caller?: CallerContext) => WireBody
  readonly parse: (text: string) => EmbeddingResponse | WireProblem
}

/**
 * Token counting (Anthropic's `count_tokens`, Bedrock's `CountTokens`): how many input tokens a
 * call would take, asked of the provider without running it. Declared for the codecs whose API
 * has it; the runner sends it as it sends an inference (credentials, authorizer, `extra_headers`,
 * error mapping).
 */
export interface CountTokensHooks<Target> {
  readonly url: (target: Target) => string
  /** the inference body the codec builds for the request, without what a count does not take (`max_tokens`, `stream`, sampling) */
  readonly body: (request: ModelRequest, call: WireCall<Target>) => WireBody | WireProblem
  readonly parse: (text: string) => number | WireProblem
}

export interface EmbeddingRequest {
  readonly input: ReadonlyArray<string>
  readonly dimensions?: number | undefined
}

export interface EmbeddingResponse {
  /** one vector per input, in the order of `input` */
  readonly embeddings: ReadonlyArray<ReadonlyArray<number>>
  readonly usage: Usage
}

/**
 * One HTTP exchange a batch hook asks the runner for: the runner adds the provider's headers
 * (credentials included) and its authorization, sends it, checks the status and maps errors
 * as for inference; the hook gets the body of a 2xx answer as text.
 */
export type BatchExchange = (request: BatchExchangeRequest) => Effect.Effect<string, ProviderFailure>

/**
 * A file of a finished batch (its results) read through the runner as it arrives, a line at a
 * time, never held whole: `each` gets every line's text (its line break dropped), or undefined
 * for a line longer than `maxResultLineBytes` (skipped unread), with its number from 1. A
 * failure `each` returns ends the download with it. The request is the same as an exchange's
 * (`maxResponseBytes` bounding the whole file).
 */
export type BatchDownload = (
  request: BatchExchangeRequest,
  each: (line: string | undefined, lineNumber: number) => ProviderFailure | undefined
) => Effect.Effect<void, ProviderFailure>

/**
 * The longest line of a batch's result file that is read: one answer, bounded as the answer of
 * a single call is by default (`[gateway] max_provider_response_bytes`); a longer line is
 * skipped, its request left without an answer.
 */
export const maxResultLineBytes = 32 * 1024 * 1024

/** A request body that is not JSON, with its content type. */
export class TextBody {
  readonly contentType: string
  readonly text: string
  constructor(contentType: string, text: string) {
    this.contentType = contentType
    this.text = text
  }
}

export interface BatchExchangeRequest {
  readonly method: "GET" | "POST" | "PUT"
  readonly url: string
  /** a JSON body, or a body of another type (a multipart upload, JSON Lines) */
  readonly body?: WireBody | TextBody | undefined
  /** headers besides the provider's (they win over the provider's of the same name) */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** a bound on the answer's bytes above the transport's default (a batch's output file) */
  readonly maxResponseBytes?: number | undefined
}

/** One request of a batch as the provider receives it: its id within the batch and its body, as built for a single call (`extra_body` applied). */
export interface BatchItem {
  readonly id: string
  readonly body: WireBody
}

/** A batch as the provider knows it, kept by the gateway between polls. */
export interface BatchHandle {
  /** the provider's id of the batch (OpenAI `batch_...`, Anthropic `msgbatch_...`, a Vertex job name) */
  readonly providerBatchId: string
  /** whatever else the codec needs to poll it (file ids, output locations), stored as JSON */
  readonly data: unknown
}

/**
 * The result of one request of a finished batch: the provider's answer to it as the text its
 * `parseResponse` reads, or why it has none (the provider's own error for it, or the batch
 * ended before it ran).
 */
export type BatchItemResult =
  | { readonly id: string; readonly ok: true; readonly body: string }
  | { readonly id: string; readonly ok: false; readonly message: string }

/**
 * What a poll finds. A batch that ended with results (completed, or expired or cancelled after
 * some requests ran) is `completed`, each request without an answer an `ok: false` result; a
 * batch that ended without any result (refused input, expired or cancelled before anything
 * ran) is `failed`.
 */
export type BatchPoll =
  | { readonly status: "pending" }
  | { readonly status: "failed"; readonly message: string }
  | { readonly status: "completed"; readonly results: ReadonlyArray<BatchItemResult> }

/**
 * Batch inference: several steps per operation (upload, create, poll, download), each an
 * exchange through the runner, so the hooks are programs over `BatchExchange`, not bodies. The
 * runner builds each item's body with `body` (not streamed) and the call's edits first.
 */
export interface BatchHooks<Target> {
  readonly start: (target: Target, items: ReadonlyArray<BatchItem>, exchange: BatchExchange) => Effect.Effect<BatchHandle, ProviderFailure>
  readonly poll: (target: Target, handle: BatchHandle, exchange: BatchExchange, download: BatchDownload) => Effect.Effect<BatchPoll, ProviderFailure>
}

/**
 * Authentication that needs more than a header made from a key: a signature over the whole
 * request (AWS SigV4), or an access token fetched and refreshed from a credential (GCP service
 * accounts). It receives the request as built (`extra_body` and `extra_headers` applied) and
 * the call's credential (the text its location resolved to: a key, a service account's JSON,
 * AWS keys as JSON), and returns the request to send. Made once per configured provider
 * (`WireCodec.authorizer`), so it may keep tokens between calls; it may use the transport
 * (a token endpoint). Its failures are this provider's: the next one may serve the request.
 */
export type Authorizer = (
  request: HttpCall,
  credential: string | undefined,
  /** the credential is one the request gave (`dynamic::`): what it holds (a token endpoint) is the caller's to choose, not the operator's */
  fromRequest?: boolean
) => Effect.Effect<HttpCall, ProviderFailure | InvalidRequest, HttpTransport>

/**
 * The settings of a provider type: the keys of its provider table besides the common ones, a
 * `Schema.Struct` whose fields the configuration decodes (once, at start-up) into `Settings`.
 */
export type SettingsSchema<Settings> = Schema.Schema<Settings> & { readonly fields: Schema.Struct.Fields }

/**
 * A provider type. `Settings` are its typed settings; `Target` is what it derives from them for
 * every call (URLs, the model name); `Event` is what its stream framing yields.
 */
/** The API a model call went through, as `gateway_raw_response` and `gateway_raw_usage` name it (TensorZero's `api_type`). */
export type ApiType = "chat_completions" | "responses" | "embeddings"

export interface WireCodec<Settings, Target, Event> {
  readonly type: string
  /** the API its inference calls go through (`ProviderClient.apiType`); `chat_completions` when absent */
  readonly apiType?: ApiType | undefined
  readonly settings: SettingsSchema<Settings>
  /** where the API key is found when the provider table does not say (`api_key_location`) */
  readonly defaultCredential: CredentialLocation
  /**
   * whether a provider table must have `model_name` (default true); a type that names its model
   * otherwise (`model_id`, `deployment_id`, `endpoint_name`) says false and reads its settings
   */
  readonly requiresModelName?: boolean | undefined
  /**
   * once per configured provider, at start-up; `model` is `model_name` ("" when the type does not
   * require it and it is absent); `env` the environment captured at start-up (AWS's `AWS_REGION`)
   */
  readonly target: (settings: Settings, model: string, env?: Environment) => Target
  /**
   * why a configured provider's target can make no call at all (a Vertex model without its
   * project, an AWS provider without a region), reported at start-up; calls of a short-hand
   * fail with the same explanation
   */
  readonly targetProblem?: ((target: Target) => string | undefined) | undefined
  readonly url: (target: Target, stream: boolean) => string
  /** the headers of a call, the authentication scheme included (no key: no authentication); a new object each time, the runner edits it */
  readonly headers: (target: Target, apiKey: string | undefined) => Record<string, string>
  /** for a type whose authentication is not a header (`Authorizer`): applied last, to the request as it will be sent */
  readonly authorizer?: ((target: Target) => Authorizer) | undefined
  /** the request body; `extra_body` is applied to it afterwards by the runner */
  readonly body: (request: ModelRequest, call: WireCall<Target>) => WireBody | WireProblem
  /** `qualifiedName` (as in `WireCall`) names the provider of the `unknown` blocks it returns, so they go back to it only */
  readonly parseResponse: (text: string, qualifiedName: string) => ParsedResponse | WireProblem
  readonly framing: StreamFraming<Event>
  readonly streamParser: () => StreamEventParser<Event>
  /** the explanation an error body carries (the runner prefixes the status and bounds the length), or undefined to show the body */
  readonly errorMessage: (body: string) => string | undefined
  /**
   * the status the failure stands for, when the provider wraps another's (SageMaker answers a
   * container's 400 as a 424 whose body holds `OriginalStatusCode`); default: the reply's own
   */
  readonly errorStatus?: ((status: number, body: string) => number) | undefined
  readonly embeddings?: EmbeddingsHooks<Target> | undefined
  readonly batch?: BatchHooks<Target> | undefined
  readonly countTokens?: CountTokensHooks<Target> | undefined
  /**
   * true for a type whose provider is another gateway (`gateway`): the variant's and the request's
   * `extra_body`/`extra_headers` edits are meant for the providers that gateway calls, so the
   * runner leaves them to the codec (`CallerContext`) and applies only the provider table's own
   * edits to the call's request
   */
  readonly forwardsCallerEdits?: boolean | undefined
}
