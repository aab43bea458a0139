/** The filters of the API (`DatapointFilter`) as the dataset store takes them: checked, times parsed. */
import type { DatapointFilter } from "../api/datasets.ts"
import { InvalidRequest } from "../errors.ts"
import { holdsNul } from "../inferences/filter.ts"
import { parseRfc3339 } from "../time.ts"
import type { DatapointFilter as DatapointStoreFilter } from "./store.ts"

/** API filter -> store filter, with times parsed; the problem (with its path) otherwise */
export const toDatapointStoreFilter = (filter: DatapointFilter, path: string): DatapointStoreFilter | InvalidRequest => {
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
      const children: Array<DatapointStoreFilter> = []
      for (let i = 0; i < filter.children.length; i++) {
        const child = toDatapointStoreFilter(filter.children[i], `${path}.children[${i}]`)
        if (child instanceof InvalidRequest) return child
        children.push(child)
      }
      return { type: filter.type, children }
    }
    case "not": {
      const child = toDatapointStoreFilter(filter.child, `${path}.child`)
      return child instanceof InvalidRequest ? child : { type: "not", child }
    }
  }
}
