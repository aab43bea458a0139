/**
 * Call planning: the call for one provider of a model, from its configuration, the variant and
 * the request. It resolves the credential, keeps the call's own key out of what may be
 * forwarded, and orders the edits (the provider's, then the variant's, then the request's that
 * apply to this call); the runner (`providers/wireProvider.ts`) then makes and sends it.
 */
import * as Result from "effect/Result"
import type { Credential } from "../config/credentials.ts"
import type { ProviderConfig } from "../config/types.ts"
import { InvalidRequest } from "../errors.ts"
import type { CallerContext } from "../providers/codec.ts"
import { ProviderFailure } from "../providers/failure.ts"
import { providerFamily } from "../providers/families.ts"
import { type ProviderCall, qualifiedProviderName } from "../providers/types.ts"
import { type CallTarget, type ExtraBodyEdit, type ExtraHeaderEdit, type ScopedEdit, scopeMatches } from "./extraBody.ts"
import type { ModelRequest } from "./types.ts"

/** The caller's edits of a call: the variant's, then the request's that apply to it. */
const callerEditsFor = <E>(
  variant: ReadonlyArray<E>,
  requested: ReadonlyArray<ScopedEdit<E>>,
  target: CallTarget
): ReadonlyArray<E> => {
  if (requested.length === 0) return variant
  const edits = [...variant]
  for (const entry of requested) if (scopeMatches(entry.scope, target)) edits.push(entry.edit)
  return edits
}

/** The edits of a call: the provider's, then the caller's. */
const editsFor = <E>(provider: ReadonlyArray<E>, caller: ReadonlyArray<E>): ReadonlyArray<E> =>
  caller.length === 0 ? provider : provider.length === 0 ? caller : [...provider, ...caller]

const noTags: Readonly<Record<string, string>> = {}

/** The request's credentials but the one that is the call's own key (a provider forwarding them must not hand it on). */
const forwardableCredentials = (
  credentials: Readonly<Record<string, string>>,
  apiKey: string | undefined
): Readonly<Record<string, string>> => {
  if (apiKey === undefined) return credentials
  let kept: Record<string, string> | undefined
  for (const name in credentials) {
    if (credentials[name] !== apiKey) continue
    kept ??= { ...credentials }
    delete kept[name]
  }
  return kept ?? credentials
}

/** What a variant adds to every call it makes. */
export interface VariantEdits {
  readonly name: string
  readonly extraBody: ReadonlyArray<ExtraBodyEdit>
  readonly extraHeaders: ReadonlyArray<ExtraHeaderEdit>
}

/** What a request brings to every call: its own scoped edits and its dynamic credentials (and, for a provider forwarding them, its tags and dryrun). */
export interface RequestExtras {
  readonly bodyEdits: ReadonlyArray<ScopedEdit<ExtraBodyEdit>>
  readonly headerEdits: ReadonlyArray<ScopedEdit<ExtraHeaderEdit>>
  readonly credentials: Readonly<Record<string, string>>
  readonly tags?: Readonly<Record<string, string>> | undefined
  readonly dryrun?: boolean | undefined
}

/** The credential of one call: a dynamic one missing from the request is the caller's fault, another missing one this provider's. */
const credentialFor = (
  credential: Credential,
  provider: ProviderConfig,
  modelName: string,
  requested: Readonly<Record<string, string>>
): Result.Result<string | undefined, InvalidRequest | ProviderFailure> => {
  switch (credential.kind) {
    case "static":
      return Result.succeed(credential.value)
    case "none":
      return Result.succeed(undefined)
    case "missing":
      return Result.fail(new ProviderFailure({ message: credential.what, timedOut: false }))
    case "dynamic": {
      const value = requested[credential.name]
      return value !== undefined ? Result.succeed(value) : Result.fail(new InvalidRequest({
        message: `credentials.${credential.name}: missing; provider "${provider.name}" of model "${modelName}" reads its API key from dynamic::${credential.name}`
      }))
    }
    case "fallback": {
      const primary = credentialFor(credential.primary, provider, modelName, requested)
      return Result.isFailure(primary) ? credentialFor(credential.fallback, provider, modelName, requested) : primary
    }
  }
}

/** Whether the credential `credentialFor` resolves to is one the request gave (`dynamic::`, or a fallback's that is). */
const credentialFromRequest = (
  credential: Credential,
  provider: ProviderConfig,
  modelName: string,
  requested: Readonly<Record<string, string>>
): boolean => {
  switch (credential.kind) {
    case "dynamic":
      return requested[credential.name] !== undefined
    case "fallback":
      return Result.isFailure(credentialFor(credential.primary, provider, modelName, requested))
        ? credentialFromRequest(credential.fallback, provider, modelName, requested)
        : credentialFromRequest(credential.primary, provider, modelName, requested)
    default:
      return false
  }
}

/**
 * The call for one provider of a model, or why it cannot be made: a missing dynamic credential
 * is the caller's fault (it ends the inference), a missing environment variable this provider's.
 */
export const providerCall = <Request = ModelRequest>(
  request: Request,
  modelName: string,
  provider: ProviderConfig,
  variant: VariantEdits,
  extras: RequestExtras
): Result.Result<ProviderCall<Request>, InvalidRequest | ProviderFailure> => {
  const credential = credentialFor(provider.credential, provider, modelName, extras.credentials)
  if (Result.isFailure(credential)) return Result.fail(credential.failure)
  const apiKey = credential.success
  const family = providerFamily(provider)
  const target: CallTarget = { variantName: variant.name, modelName, providerName: provider.name, providerFamily: family }
  const caller: CallerContext = {
    tags: extras.tags ?? noTags,
    dryrun: extras.dryrun === true,
    credentials: forwardableCredentials(extras.credentials, apiKey),
    extraBody: callerEditsFor(variant.extraBody, extras.bodyEdits, target),
    extraHeaders: callerEditsFor(variant.extraHeaders, extras.headerEdits, target)
  }
  return Result.succeed({
    request,
    apiKey,
    credentialFromRequest: provider.credential.kind !== "static" && credentialFromRequest(provider.credential, provider, modelName, extras.credentials),
    extraBody: editsFor(provider.extraBody, caller.extraBody),
    extraHeaders: editsFor(provider.extraHeaders, caller.extraHeaders),
    modelName,
    providerName: provider.name,
    family,
    qualifiedName: qualifiedProviderName(modelName, provider.name),
    caller,
    ...(provider.providerTools !== undefined && provider.providerTools.length > 0 && { providerTools: provider.providerTools })
  })
}
