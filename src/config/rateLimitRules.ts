/** `[[rate_limiting.rules]]` as written -> a `RateLimitRule`, or what is wrong with it. */
import { publicIdPattern } from "../auth/apiKey.ts"
import type { RawRateLimitRule } from "./raw.ts"
import { workspaceNameProblem, workspaceNameRule } from "../workspace.ts"
import { eachValue, type Limit, periods, periodSeconds, type RateLimitRule, ruleId, type ScopeCondition } from "../ratelimit/rules.ts"

type RawScope = NonNullable<typeof RawRateLimitRule.Type["scope"]>

/** a `scope = [...]` as written (of a rule or a budget) -> its conditions, or the first one wrong */
export const scopeConditions = (
  raw: RawScope
): Array<ScopeCondition> | { readonly path: ReadonlyArray<string | number>; readonly message: string } => {
  const scope: Array<ScopeCondition> = []
  for (const [i, condition] of raw.entries()) {
    if ("api_key_public_id" in condition) {
      const id = condition.api_key_public_id
      if (id !== eachValue && !publicIdPattern.test(id)) {
        return { path: ["scope", i, "api_key_public_id"], message: `expected a 12-character public id or "${eachValue}", got "${id}"` }
      }
      scope.push({ kind: "api_key", publicId: id })
    } else if ("workspace" in condition) {
      if (condition.workspace !== eachValue && workspaceNameProblem(condition.workspace) !== undefined) {
        return {
          path: ["scope", i, "workspace"],
          message: `expected a workspace name (${workspaceNameRule.description}) or "${eachValue}", got "${condition.workspace.slice(0, 80)}"`
        }
      }
      scope.push({ kind: "workspace", workspace: condition.workspace })
    } else scope.push({ kind: "tag", key: condition.tag_key, value: condition.tag_value })
  }
  return scope
}

export const rateLimitRule = (
  index: number,
  rule: typeof RawRateLimitRule.Type
): RateLimitRule | { readonly path: ReadonlyArray<string | number>; readonly message: string } => {
  const limits: Array<Limit> = []
  for (const resource of ["model_inferences", "tokens", "cost"] as const) {
    for (const period of periods) {
      const raw = rule[`${resource}_per_${period}`]
      if (raw === undefined) continue
      const { capacity, refill } = typeof raw === "number" ? { capacity: raw, refill: raw } : { capacity: raw.capacity, refill: raw.refill_rate }
      limits.push({ resource, period, capacity, refillPerSecond: refill / periodSeconds[period] })
    }
  }
  if (limits.length === 0) {
    return { path: [], message: "a rule needs at least one limit, such as model_inferences_per_minute, tokens_per_hour or cost_per_day" }
  }
  const scope = scopeConditions(rule.scope ?? [])
  if ("path" in scope) return scope
  // TensorZero's rule: either `priority = N` or `always = true` (a rule that applies whatever the priorities)
  if (rule.always === true && rule.priority !== undefined) {
    return { path: ["always"], message: "a rule has either always = true or a priority, not both" }
  }
  const priority = rule.always === true ? "always" : rule.priority
  if (priority === undefined) return { path: ["priority"], message: "missing field (or always = true for a rule that always applies)" }
  return { index, priority, scope, limits, id: ruleId(priority, scope, limits) }
}
