/**
 * A page as the store ports take it (`limit` rows from `offset`), made whole and not negative
 * before it reaches SQL: the one place every adapter of both databases clamps it.
 */
export interface StorePage {
  readonly limit: number
  readonly offset: number
}

export const wholePage = (page: StorePage): StorePage => ({
  limit: Math.max(0, Math.floor(page.limit)),
  offset: Math.max(0, Math.floor(page.offset))
})
