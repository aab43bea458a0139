/**
 * The migrations' statements for a replicated ClickHouse cluster
 * (GATEWAY_CLICKHOUSE_CLUSTER_NAME, docs/deploying.md): each runs `ON CLUSTER`, so
 * that every replica gets every table, and each table's engine is the Replicated variant of its
 * own, so that every replica holds every row. Materialized views exist on every replica and
 * fire where a row is inserted; their target tables are replicated like any other.
 *
 * The SQL is that of ClickHouse 18.16 as well as current releases: a Replicated engine's
 * arguments are explicit (`'/clickhouse/tables/{shard}/<database>/<table>', '{replica}'`, then
 * the engine's own), with the database and table named, since 18.16 has no `{database}` nor
 * `{table}` macro; table names are qualified by the database, since a replica runs a
 * distributed statement in its default database. Only the statement kinds the migrations use
 * have a cluster form: a new kind fails here (and in the unit test over every migration),
 * rather than run on one replica only.
 */

/** ZooKeeper's folder of a replicated table, shared by its replicas (`{shard}` is each replica's macro) */
export const zooKeeperPath = (database: string, table: string) => `/clickhouse/tables/{shard}/${database}/${table}`

/** A cluster name as it goes into `ON CLUSTER`: the names a `<remote_servers>` entry can have. */
export const isClusterName = (name: string): boolean => /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/.test(name)

export interface Cluster {
  readonly name: string
  readonly database: string
}

const onCluster = ({ name }: Cluster) => `ON CLUSTER \`${name}\``
const qualified = ({ database }: Cluster, table: string) => `\`${database}\`.${table}`

/** `ENGINE = XMergeTree` or `ENGINE = XMergeTree(args)` as its Replicated variant, the table's ZooKeeper path first. */
const replicatedEngine = (cluster: Cluster, table: string, statement: string): string => {
  const engine = /ENGINE = (\w*MergeTree)(?:\(([^)]*)\))?/
  const match = engine.exec(statement)
  if (match === null) throw new Error(`a replicated cluster needs a MergeTree engine: ${statement.slice(0, 80)}...`)
  const [, name, args] = match
  const replicatedArgs = [`'${zooKeeperPath(cluster.database, table)}'`, "'{replica}'", ...(args?.trim() ? [args.trim()] : [])]
  return statement.replace(engine, `ENGINE = Replicated${name}(${replicatedArgs.join(", ")})`)
}

/** `statement` (one of the migrations') as it runs on `cluster`. */
export const clusterStatement = (cluster: Cluster, statement: string): string => {
  let match = /^CREATE TABLE IF NOT EXISTS (\w+) \(/.exec(statement)
  if (match !== null) {
    const table = match[1]
    const created = statement.replace(match[0], `CREATE TABLE IF NOT EXISTS ${qualified(cluster, table)} ${onCluster(cluster)} (`)
    return replicatedEngine(cluster, table, created)
  }
  match = /^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+) TO (\w+) AS\b/.exec(statement)
  if (match !== null) {
    const [head, view, target] = match
    const body = statement.slice(head.length).replace(/\bFROM (\w+)/g, (_, table: string) => `FROM ${qualified(cluster, table)}`)
    return `CREATE MATERIALIZED VIEW IF NOT EXISTS ${qualified(cluster, view)} ${onCluster(cluster)} TO ${qualified(cluster, target)} AS${body}`
  }
  match = /^ALTER TABLE (\w+) (?=(ADD|DROP|MODIFY|COMMENT) COLUMN )/.exec(statement)
  if (match !== null) return statement.replace(match[0], `ALTER TABLE ${qualified(cluster, match[1])} ${onCluster(cluster)} `)
  match = /^DROP TABLE IF EXISTS (\w+)$/.exec(statement)
  if (match !== null) return `DROP TABLE IF EXISTS ${qualified(cluster, match[1])} ${onCluster(cluster)}`
  throw new Error(`this migration statement has no form for a replicated cluster: ${statement.slice(0, 80)}...`)
}

/**
 * Whether another gateway migrating the cluster at the same time ran `statement` already: a
 * query counting what it creates (or drops) on one replica, and the count that means so. A
 * table, view or column on one replica came from a distributed statement queued for every
 * replica, which each runs in order, so the statement need not be queued again: of two
 * gateways started together, the second mostly follows the first rather than doubling the
 * queue. Undefined: run it.
 */
export const doneOnClusterCheck = (
  { database }: Cluster,
  statement: string
): { readonly query: string; readonly doneWhen: (count: number) => boolean } | undefined => {
  const quoted = (name: string) => `'${name}'`
  const tableCount = (table: string) => `SELECT count() AS count FROM system.tables WHERE database = ${quoted(database)} AND name = ${quoted(table)}`
  let match = /^CREATE (?:TABLE|MATERIALIZED VIEW) IF NOT EXISTS (\w+)/.exec(statement)
  if (match !== null) return { query: tableCount(match[1]), doneWhen: (count) => count > 0 }
  match = /^DROP TABLE IF EXISTS (\w+)$/.exec(statement)
  if (match !== null) return { query: tableCount(match[1]), doneWhen: (count) => count === 0 }
  match = /^ALTER TABLE (\w+) ADD COLUMN (\w+) /.exec(statement)
  if (match !== null) {
    return {
      query: `SELECT count() AS count FROM system.columns WHERE database = ${quoted(database)} AND table = ${quoted(match[1])} AND name = ${quoted(match[2])}`,
      doneWhen: (count) => count > 0
    }
  }
  return undefined
}

/** `CREATE DATABASE` on every replica */
export const createDatabaseStatement = (database: string, cluster: Cluster | undefined) =>
  `CREATE DATABASE IF NOT EXISTS \`${database}\`${cluster === undefined ? "" : ` ${onCluster(cluster)}`}`
