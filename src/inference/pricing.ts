/**
 * What a model call cost, in one place: a provider's `cost` rules (`cost.ts`) applied to its
 * raw answer. A whole answer is read once; a stream rule by rule from its last chunk back
 * (Anthropic reports input tokens in `message_start`, output tokens in `message_delta`); a
 * cached answer cost nothing. When a required rule finds no number the cost is unknown, and a
 * warning says so (at most one per 10 s: a provider that stopped reporting what a rule needs
 * would otherwise log on every call). Model calls, streams and DICL's embedding calls are all
 * priced by the `Pricing` their engine was made with.
 */
import * as Effect from "effect/Effect"
import type { ProviderConfig } from "../config/types.ts"
import { throttledWarning } from "../throttledWarning.ts"
import type { CostRule } from "./cost.ts"

/** A call's price: `cost` undefined when no rule is configured, none found a number, or a required one found none (`missing`). */
export interface Priced {
  readonly cost: number | undefined
  /** the pointers of required rules that found no number */
  readonly missing: ReadonlyArray<string>
}

const unpriced: Priced = { cost: undefined, missing: [] }

/** the number at `tokens` in `json`, if there is one */
const numberAt = (json: unknown, tokens: ReadonlyArray<string>): number | undefined => {
  let at = json
  for (const token of tokens) {
    if (typeof at !== "object" || at === null) return undefined
    if (Array.isArray(at)) {
      if (!/^(0|[1-9]\d*)$/.test(token)) return undefined
      at = at[Number(token)]
    } else {
      if (!Object.hasOwn(at, token)) return undefined
      at = (at as Record<string, unknown>)[token]
    }
  }
  return typeof at === "number" && Number.isFinite(at) ? at : undefined
}

const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const price = (
  rules: ReadonlyArray<CostRule>,
  answer: "whole" | "stream",
  valueOf: (rule: CostRule) => number | undefined
): Priced => {
  let cost = 0
  let found = false
  const missing: Array<string> = []
  for (const rule of rules) {
    if (rule.answer !== undefined && rule.answer !== answer) continue
    const value = valueOf(rule)
    if (value === undefined) {
      if (rule.required) missing.push(rule.pointer)
      continue
    }
    found = true
    cost += value * rule.perUnit
  }
  return missing.length > 0 ? { cost: undefined, missing } : found ? { cost, missing } : unpriced
}

/** The cost of a whole answer, from its raw text (JSON). */
export const costOfResponse = (rules: ReadonlyArray<CostRule> | undefined, rawResponse: string): Priced => {
  if (rules === undefined || rules.length === 0) return unpriced
  const json = parsed(rawResponse)
  return price(rules, "whole", (rule) => numberAt(json, rule.tokens))
}

/** The cost of a streamed answer: each rule reads the last raw chunk (JSON) where its pointer finds a number. */
export const costOfChunks = (rules: ReadonlyArray<CostRule> | undefined, rawChunks: ReadonlyArray<string>): Priced => {
  if (rules === undefined || rules.length === 0) return unpriced
  const chunks = rawChunks.map(parsed)
  return price(rules, "stream", (rule) => {
    for (let i = chunks.length - 1; i >= 0; i--) {
      const value = numberAt(chunks[i], rule.tokens)
      if (value !== undefined) return value
    }
    return undefined
  })
}

/** Prices what a provider answered by its `cost` rules (unknown without any), warning (bounded) when a required rule found nothing. */
export interface Pricing {
  /** a whole answer, from its raw response */
  readonly response: (provider: ProviderConfig, rawResponse: string) => Effect.Effect<number | undefined>
  /** a streamed answer, from its raw chunks */
  readonly chunks: (provider: ProviderConfig, rawChunks: ReadonlyArray<string>) => Effect.Effect<number | undefined>
  /** an answer served from the cache cost nothing: 0 for a provider with `cost` rules, unknown for one without */
  readonly cached: (provider: ProviderConfig) => number | undefined
}

/** A `Pricing` with its own bound on warnings: one per engine (that is, per configuration). */
export const makePricing = (): Pricing => {
  const unpricedWarning = throttledWarning(10_000)
  const warned = (provider: ProviderConfig, priced: Priced): Effect.Effect<number | undefined> =>
    priced.missing.length === 0 ? Effect.succeed(priced.cost) : Effect.as(
      unpricedWarning.warn((heldBack) =>
        `provider "${provider.name}": the required cost pointer(s) ${priced.missing.join(", ")} found no number in the raw response, so the call's cost is unknown${
          heldBack === 0 ? "" : ` (and ${heldBack} more calls since the last warning)`
        }`
      ),
      priced.cost
    )
  return {
    response: (provider, rawResponse) => warned(provider, costOfResponse(provider.cost, rawResponse)),
    chunks: (provider, rawChunks) => warned(provider, costOfChunks(provider.cost, rawChunks)),
    cached: (provider) => provider.cost !== undefined && provider.cost.length > 0 ? 0 : undefined
  }
}
