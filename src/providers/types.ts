/**
 * What a provider type is: a schema for its configuration table, a default credential
 * location, and a client that turns a `ModelRequest` into its wire format and back.
 * Adding a provider means adding a folder and one line to `registry.ts`.
 */
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import type { CredentialLocation } from "../config/credentials.ts"
import type { ProviderConfig } from "../config/types.ts"
import type { ExtraBodyEdit, ExtraHeaderEdit } from "../inference/extraBody.ts"
import type { ModelRequest, ProviderChunk, ProviderResponse } from "../inference/types.ts"
import type { HttpTransport } from "../services.ts"

/** One provider's failure; collected into the model's error when every provider fails. */
export class ProviderFailure extends Schema.TaggedError<ProviderFailure>()("ProviderFailure", {
  message: Schema.String,
  timedOut: Schema.Boolean
}) {}

/** Everything a provider needs for one call, already resolved by the inference path. */
export interface ProviderCall {
  readonly request: ModelRequest
  readonly apiKey: string | undefined
  /** configured then request-level edits that apply to this call, in order */
  readonly extraBody: ReadonlyArray<ExtraBodyEdit>
  readonly extraHeaders: ReadonlyArray<ExtraHeaderEdit>
  readonly modelName: string
  readonly providerName: string
  /** `gateway::model_name::<model>::provider_name::<provider>`, the scope of `unknown` blocks */
  readonly qualifiedName: string
}

/** A streamed answer: the request as sent, and the chunks as they arrive. */
export interface ProviderStream {
  readonly rawRequest: string
  readonly chunks: Stream.Stream<ProviderChunk, ProviderFailure>
}

export interface ProviderClient {
  readonly infer: (call: ProviderCall) => Effect.Effect<ProviderResponse, ProviderFailure, HttpTransport>
  /** fails before the stream starts for errors the provider reports up front */
  readonly stream: (call: ProviderCall) => Effect.Effect<ProviderStream, ProviderFailure, HttpTransport>
}

export interface ProviderDefinition {
  readonly type: string
  readonly defaultCredential: CredentialLocation
  /** the fields of a provider table specific to this type, besides `providerCommonFields` */
  readonly settingsFields: Schema.Struct.Fields
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
