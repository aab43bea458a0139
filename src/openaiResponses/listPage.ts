/** OpenAI's list pages (`{object: "list", data, first_id, last_id, has_more}`), by `order`, `after` and `limit`. */

export interface ListQuery {
  readonly order: "asc" | "desc"
  readonly limit: number
  /** the id of the item the page starts after; after an unknown one the page is empty (a pager stops) */
  readonly after?: string | undefined
}

export interface ListPage<A> {
  readonly object: "list"
  readonly data: ReadonlyArray<A>
  readonly first_id: string | null
  readonly last_id: string | null
  readonly has_more: boolean
}

/** `items` oldest first */
export const listPage = <A extends { readonly id: string }>(items: ReadonlyArray<A>, query: ListQuery): ListPage<A> => {
  const ordered = query.order === "asc" ? items : [...items].reverse()
  const at = query.after === undefined ? -1 : ordered.findIndex((item) => item.id === query.after)
  const data = query.after !== undefined && at < 0 ? [] : ordered.slice(at + 1, at + 1 + query.limit)
  return {
    object: "list",
    data,
    first_id: data[0]?.id ?? null,
    last_id: data[data.length - 1]?.id ?? null,
    has_more: data.length > 0 && at + 1 + query.limit < ordered.length
  }
}
