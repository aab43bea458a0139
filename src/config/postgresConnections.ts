/**
 * The connection budget of one gateway process on Postgres: `[postgres] connection_pool_size`
 * is the most connections the process opens to Postgres in all, split between its pools. The
 * deployment's sum is then
 *   instances x `--workers` x connection_pool_size <= max_connections - superuser_reserved_connections
 * (or PgBouncer's `max_client_conn`, when a pooler is in between). docs/deploying.md (Postgres: connections, PgBouncer, restarts)
 * explains the split.
 */

/** `connection_pool_size` when the configuration leaves it out (TensorZero's default) */
export const defaultPostgresConnections = 20

/** which pools the process opens */
export interface PostgresUses {
  /** GATEWAY_RELATIONAL_DB_URL is set: keys, rate limits and sessions; the task queue and its locks */
  readonly relational: boolean
  /** observability is stored in Postgres */
  readonly analytics: boolean
}

/** each pool's most connections; 0 for a pool the process does not open */
export interface PostgresConnections {
  /** keys, rate limits, the UI's sessions: on the path of every request */
  readonly relational: number
  /** the write queue's batches and the reads of the analytics database */
  readonly analytics: number
  /** the task queue (pg-boss): polling, heartbeats, progress */
  readonly tasks: number
  /** `Tasks.exclusive` and `tryExclusive`: each held lock keeps one connection in a transaction */
  readonly locks: number
}

/**
 * The split of `total` (`defaultPostgresConnections` when undefined): with the relational
 * database, a tenth (at least 1) for locks and a fifth (at least 1) for the task queue; the rest
 * for the stores, halved when observability is in Postgres too (the relational pool takes the
 * odd one). Every pool opened gets at least one connection, so a total below the number of
 * pools (4 at most) is exceeded by that much.
 */
export const postgresConnections = (total: number | undefined, uses: PostgresUses): PostgresConnections => {
  const budget = Math.max(1, Math.floor(total ?? defaultPostgresConnections))
  if (!uses.relational) return { relational: 0, analytics: uses.analytics ? budget : 0, tasks: 0, locks: 0 }
  const locks = Math.max(1, Math.floor(budget / 10))
  const tasks = Math.max(1, Math.floor(budget / 5))
  const stores = budget - locks - tasks
  if (!uses.analytics) return { relational: Math.max(1, stores), analytics: 0, tasks, locks }
  const relational = Math.max(1, Math.ceil(stores / 2))
  return { relational, analytics: Math.max(1, stores - relational), tasks, locks }
}
