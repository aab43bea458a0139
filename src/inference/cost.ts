/**
 * A provider's `cost` rules (`{ pointer, cost_per_million | cost_per_unit, required }`) as the
 * configuration writes and checks them: each reads a number from the provider's raw answer by
 * JSON Pointer and prices it, so prompt-cache reads, reasoning tokens or images can each have
 * their price (a negative one for a discount). Applying them to an answer is `pricing.ts`.
 */
import * as Schema from "effect/Schema"
import { parsePointer } from "./extraBody.ts"

/** One rule as written in a provider table. */
export const RawCostRule = Schema.Struct({
  pointer: Schema.String,
  cost_per_million: Schema.optional(Schema.Finite),
  cost_per_unit: Schema.optional(Schema.Finite),
  /** when the pointer finds no number, the call's cost is unknown (null) rather than the rest's sum */
  required: Schema.optional(Schema.Boolean)
})
export type RawCostRule = typeof RawCostRule.Type

/** A rule checked at start-up: its pointer parsed, its price per unit of the number it points at. */
export interface CostRule {
  readonly pointer: string
  readonly tokens: ReadonlyArray<string>
  readonly perUnit: number
  readonly required: boolean
  /** only for whole answers or only for streams (the rules a `pricing` table expands to); both when absent */
  readonly answer?: "whole" | "stream" | undefined
}

/** The rule, or what is wrong with it (the field at fault and why). */
export const costRule = (raw: RawCostRule): CostRule | { readonly field: string; readonly message: string } => {
  const tokens = parsePointer(raw.pointer)
  if (tokens === undefined || tokens.length === 0) {
    return { field: "pointer", message: `"${raw.pointer}" is not a JSON Pointer to a field of the raw response (it must start with "/", e.g. "/usage/prompt_tokens")` }
  }
  if ((raw.cost_per_million === undefined) === (raw.cost_per_unit === undefined)) {
    return { field: "cost_per_million", message: "give exactly one of cost_per_million and cost_per_unit" }
  }
  return {
    pointer: raw.pointer,
    tokens,
    perUnit: raw.cost_per_unit ?? raw.cost_per_million! / 1_000_000,
    required: raw.required ?? false
  }
}

/**
 * A model's prices per million tokens (`pricing = { input_per_million, ... }` on a model or one
 * of its providers): expanded into `cost` rules for the provider's type, and read by the budgets'
 * estimate (src/budgets/estimate.ts). Cache reads and writes are priced as the provider prices
 * them; absent, they cost what input tokens cost.
 */
export interface ModelPrices {
  readonly inputPerMillion: number
  readonly outputPerMillion: number
  readonly cacheReadPerMillion?: number | undefined
  readonly cacheWritePerMillion?: number | undefined
}
