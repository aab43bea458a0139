/**
 * The cost a call under a budget reserves before it runs (docs/budgets.md): an upper bound of
 * what its provider will bill, from the provider's prices (`ProviderConfig.prices`):
 * `ceil(promptLength / 3)` input tokens (a token is about four characters of ordinary text, so
 * three makes the bound safe) at the input price, plus `max_tokens` at the output price. A
 * provider without prices reserves `[rate_limiting] default_cost`. Pure.
 */
import type { ModelPrices } from "../inference/cost.ts"

export type CostEstimate =
  | { readonly ok: true; readonly cost: number }
  /** the provider has prices but the request set no `max_tokens`: the output has no bound */
  | { readonly ok: false }

/** input tokens at most, for `promptLength` characters of prompt */
export const inputTokensUpper = (promptLength: number): number => Math.ceil(promptLength / 3)

export const estimateCost = (
  prices: ModelPrices | undefined,
  promptLength: number,
  maxTokens: number | undefined,
  defaultCost: number
): CostEstimate => {
  if (prices === undefined) return { ok: true, cost: defaultCost }
  if (maxTokens === undefined) return { ok: false }
  return {
    ok: true,
    cost: (inputTokensUpper(promptLength) * prices.inputPerMillion + maxTokens * prices.outputPerMillion) / 1_000_000
  }
}

/**
 * What a call is charged at its end: nothing when it failed; its cost by its provider's `cost`
 * rules, or `default_cost` when it reported none; a stream cut short at least its estimate
 * (the provider may bill the whole answer, and the client chose to leave).
 */
export const chargedCost = (
  outcome: "failed" | { readonly cost: number | undefined; readonly cutShort: boolean },
  estimate: number,
  defaultCost: number
): number => {
  if (outcome === "failed") return 0
  const cost = outcome.cost ?? defaultCost
  return outcome.cutShort ? Math.max(cost, estimate) : cost
}
