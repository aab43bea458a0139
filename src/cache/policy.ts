/**
 * The model answer cache (spec 4.1 `cache_options`): keyed by the model, the provider, the
 * full provider request and the caller's credential, so two calls share an entry only when the
 * provider would have received the same request from the same payer. With authentication on,
 * entries are also kept apart per API key unless `[gateway.cache] share_across_api_keys`, which
 * shares them within one workspace only (`cacheSharing`).
 */
import { hash } from "node:crypto"
import type { CacheOptions } from "../api/inference.ts"
import type { GatewaySettings, ProviderConfig } from "../config/types.ts"
import type { ProviderResponse } from "../inference/types.ts"
import type { ProviderCall } from "../providers/types.ts"
import type { CacheEntry } from "../analytics/records.ts"
import { defaultWorkspace } from "../workspace.ts"

export interface CachePolicy {
  readonly read: boolean
  readonly write: boolean
  readonly maxAgeS: number | undefined
  /** entries are shared only between requests of the same scope (the API key's public id, when kept apart; else the workspace) */
  readonly scope?: string | undefined
  /** a lookup that takes longer is abandoned and the provider called */
  readonly lookupTimeoutMs?: number | undefined
}

/** Where the cache is shared: `scope` (see `CachePolicy`) and how long a lookup may take. */
export interface CacheSharing {
  readonly scope: string | undefined
  readonly lookupTimeoutMs: number | undefined
}

/**
 * Where a caller's cache entries are shared. With authentication on and `share_across_api_keys`
 * off: with its own key's requests only (the scope is the key's public id). Otherwise (shared,
 * or authentication off): with every request of its workspace, never another's; `default` has
 * no scope part, so the entries made before workspaces existed keep matching.
 */
export const cacheSharing = (
  gateway: Pick<GatewaySettings, "auth" | "cache">,
  publicId: string | undefined,
  workspace: string
): CacheSharing => ({
  scope: gateway.auth.enabled && !gateway.cache.shareAcrossApiKeys && publicId !== undefined
    ? publicId
    : workspace === defaultWorkspace
    ? undefined
    : `workspace:${workspace}`,
  lookupTimeoutMs: gateway.cache.lookupTimeoutMs
})

/** `write_only` unless asked otherwise; `dryrun` never writes. */
export const cachePolicy = (
  options: typeof CacheOptions.Type | undefined,
  dryrun: boolean,
  sharing?: CacheSharing
): CachePolicy => {
  const enabled = options?.enabled ?? "write_only"
  return {
    read: enabled === "on" || enabled === "read_only",
    write: !dryrun && (enabled === "on" || enabled === "write_only"),
    maxAgeS: options?.max_age_s ?? undefined,
    scope: sharing?.scope,
    lookupTimeoutMs: sharing?.lookupTimeoutMs
  }
}

/**
 * The hash of a call's key `parts` (what it asks), with what the caller paid it with and the
 * cache's scope, each appended only when present (the keys of calls with none stay as they
 * were): a credential the caller sent (`dynamic::`), and the caller's credentials a provider
 * forwards to another gateway (`forward_credentials`), which pay for its answer there. They
 * only enter the hash, never storage.
 */
export const hashKeyParts = (prefix: string, parts: Array<unknown>, provider: ProviderConfig, call: ProviderCall<unknown>, scope: string | undefined): string => {
  if (provider.credential.kind === "dynamic") parts.push(["credential", call.apiKey])
  const forwarded = call.caller?.credentials
  if (provider.settings.forward_credentials === true && forwarded !== undefined && Object.keys(forwarded).length > 0) {
    parts.push(["forwarded_credentials", forwarded])
  }
  if (scope !== undefined) parts.push(["scope", scope])
  // the text of JSON.stringify([...leading, ...parts]), the leading parts' text made once per provider
  let text = prefix
  for (const part of parts) text += "," + (JSON.stringify(part) ?? "null")
  // the one-shot hash costs half of createHash().update().digest() on the hot path
  return hash("sha256", text + "]")
}

/**
 * The JSON text of `leading()` without its closing bracket, made once per provider and `name`:
 * the parts of a key that are the same for every call of a provider (its settings may be large)
 * are not stringified again for each. A memo of a pure function, forgotten with its provider.
 */
const prefixes = new WeakMap<ProviderConfig, Map<string, string>>()
export const keyPrefix = (provider: ProviderConfig, name: string, leading: () => Array<unknown>): string => {
  let byName = prefixes.get(provider)
  if (byName === undefined) prefixes.set(provider, byName = new Map())
  let prefix = byName.get(name)
  if (prefix === undefined) byName.set(name, prefix = JSON.stringify(leading()).slice(0, -1))
  return prefix
}

/**
 * The key of a call's answer. A credential the caller sent (`dynamic::`) is part of it, so an
 * answer paid with one credential is never served to a caller holding another (or a bogus one);
 * it only enters the hash, never storage. The gateway's own credentials are the same for every
 * caller, and left out so that rotating them keeps the cache.
 */
export const cacheKey = (provider: ProviderConfig, call: ProviderCall, scope?: string | undefined): string => {
  const request = call.request
  const tools = request.tools === undefined ? undefined : {
    tools: request.tools.tools.map(({ validator: _validator, ...tool }) => tool),
    allowed: request.tools.allowed,
    choice: request.tools.choice,
    parallel: request.tools.parallelToolCalls
  }
  const prefix = keyPrefix(provider, `${call.modelName}\0${call.providerName}`, () => [
    call.modelName,
    call.providerName,
    provider.type,
    provider.modelName,
    provider.settings
  ])
  return hashKeyParts(prefix, [{ ...request, tools }, call.extraBody, call.extraHeaders], provider, call, scope)
}

/** A cached entry as a provider response: the stored output, no tokens spent. */
export const cachedResponse = (entry: CacheEntry): ProviderResponse => ({
  output: entry.output,
  usage: { input_tokens: 0, output_tokens: 0 },
  finishReason: entry.finishReason,
  rawRequest: entry.rawRequest,
  rawResponse: entry.rawResponse
})
