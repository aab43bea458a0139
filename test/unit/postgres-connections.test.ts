/**
 * The connection budget (src/config/postgresConnections.ts): the pools a process opens never add
 * up to more than `[postgres] connection_pool_size` (once it is at least the number of pools),
 * and each pool opened gets at least one connection.
 */
import { describe, expect, it } from "vitest"
import { defaultPostgresConnections, type PostgresConnections, postgresConnections } from "../../src/config/postgresConnections.ts"

const sum = (connections: PostgresConnections) => connections.relational + connections.analytics + connections.tasks + connections.locks

describe("the Postgres connection budget", () => {
  it("splits the default of 20 between the stores, the task queue and its locks", () => {
    expect(postgresConnections(undefined, { relational: true, analytics: true })).toEqual({ relational: 7, analytics: 7, tasks: 4, locks: 2 })
    expect(postgresConnections(undefined, { relational: true, analytics: false })).toEqual({ relational: 14, analytics: 0, tasks: 4, locks: 2 })
    expect(postgresConnections(undefined, { relational: false, analytics: true })).toEqual({ relational: 0, analytics: 20, tasks: 0, locks: 0 })
    expect(sum(postgresConnections(undefined, { relational: true, analytics: true }))).toBe(defaultPostgresConnections)
  })

  it("never exceeds the total for any total from the number of pools up, and gives every pool opened a connection", () => {
    for (const uses of [{ relational: true, analytics: true }, { relational: true, analytics: false }, { relational: false, analytics: true }]) {
      const pools = (uses.relational ? 3 : 0) + (uses.analytics ? 1 : 0)
      for (let total = pools; total <= 200; total++) {
        const connections = postgresConnections(total, uses)
        expect(sum(connections), `${total} ${JSON.stringify(uses)}`).toBe(total)
        if (uses.relational) expect(Math.min(connections.relational, connections.tasks, connections.locks)).toBeGreaterThanOrEqual(1)
        if (uses.analytics) expect(connections.analytics).toBeGreaterThanOrEqual(1)
      }
    }
  })

  it("gives each pool one connection when the total is below the number of pools", () => {
    expect(postgresConnections(2, { relational: true, analytics: true })).toEqual({ relational: 1, analytics: 1, tasks: 1, locks: 1 })
    expect(postgresConnections(1, { relational: true, analytics: false })).toEqual({ relational: 1, analytics: 0, tasks: 1, locks: 1 })
  })

  it("opens nothing without a database on Postgres", () => {
    expect(sum(postgresConnections(10, { relational: false, analytics: false }))).toBe(0)
  })
})
