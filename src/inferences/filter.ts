/** The filters of the API (`InferenceFilter`) as the inference store takes them: checked, times parsed. */
import type { InferenceFilter } from "../api/inferences.ts"
import { InvalidRequest } from "../errors.ts"
import { parseRfc3339 } from "../time.ts"
import type { StoreFilter } from "./store.ts"

// Postgres refuses a NUL in any text, and no stored name or tag holds one: a client mistake, not a database failure
export const holdsNul = "holds a NUL character (\\u0000), which no stored value can contain"

/** API filter -> store filter, with times parsed; the problem (with its path) otherwise */
export const toStoreFilter = (filter: InferenceFilter, path: string): StoreFilter | InvalidRequest => {
  switch (filter.type) {
    case "tag":
      if (filter.key.includes("\0")) return new InvalidRequest({ message: `${path}.key: ${holdsNul}` })
      if (filter.value.includes("\0")) return new InvalidRequest({ message: `${path}.value: ${holdsNul}` })
      return { ...filter, comparison_operator: filter.comparison_operator ?? "=" }
    case "time": {
      const time = parseRfc3339(filter.time)
      if (time === undefined) {
        return new InvalidRequest({ message: `${path}.time: expected an RFC 3339 time such as 2026-01-31T12:00:00Z, got "${filter.time}"` })
      }
      return { type: "time", time, comparison_operator: filter.comparison_operator }
    }
    case "and":
    case "or": {
      const children: Array<StoreFilter> = []
      for (let i = 0; i < filter.children.length; i++) {
        const child = toStoreFilter(filter.children[i], `${path}.children[${i}]`)
        if (child instanceof InvalidRequest) return child
        children.push(child)
      }
      return { type: filter.type, children }
    }
    case "not": {
      const child = toStoreFilter(filter.child, `${path}.child`)
      return child instanceof InvalidRequest ? child : { type: "not", child }
    }
  }
}
