/**
 * What a model call cost: a provider's `cost` rules (`{ pointer, cost_per_million |
 * cost_per_unit, required }`) read numbers from its raw answer by JSON Pointer and price them,
 * so prompt-cache reads, reasoning tokens or images can each have their price (a negative one
 * for a discount). A whole answer is read once; a stream rule by rule from its last chunk back
 * (Anthropic reports input tokens in `message_start`, output tokens in `message_delta`).
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

const price = (rules: ReadonlyArray<CostRule>, valueOf: (rule: CostRule) => number | undefined): Priced => {
  let cost = 0
  let found = false
  const missing: Array<string> = []
  for (const rule of rules) {
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
  return price(rules, (rule) => numberAt(json, rule.tokens))
}

/** The cost of a streamed answer: each rule reads the last raw chunk (JSON) where its pointer finds a number. */
export const costOfChunks = (rules: ReadonlyArray<CostRule> | undefined, rawChunks: ReadonlyArray<string>): Priced => {
  if (rules === undefined || rules.length === 0) return unpriced
  const chunks = rawChunks.map(parsed)
  return price(rules, (rule) => {
    for (let i = chunks.length - 1; i >= 0; i--) {
      const value = numberAt(chunks[i], rule.tokens)
      if (value !== undefined) return value
    }
    return undefined
  })
}
