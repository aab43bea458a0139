/**
 * A Redis Cluster as one Link (link.ts): node-redis's cluster client, started from the node
 * GATEWAY_REDIS_URL names. It reads the slot map from that node (CLUSTER SLOTS), connects to
 * every master, sends each command to the master of its key's slot, follows MOVED and ASK
 * redirections (reading the map again on MOVED), and reads the map again, from the other nodes,
 * when a node has been unreachable for `refreshAfterMs` (a master that failed: its replica is
 * promoted and the map names it). Replicas are not read from: every command goes to a master.
 *
 * The URL's user, password and TLS hold for every node; the nodes are reached at the addresses
 * the cluster announces. A cluster has only database 0.
 */
import { createCluster, ErrorReply } from "redis"
import { type CommandOptions, failFast, type Link, type LinkEvents, reconnectForever, type RedisReply } from "./link.ts"

/** a node still unreachable this long after it went away makes the client read the slot map again */
const refreshAfterMs = 1_000

export interface ClusterNode {
  readonly host: string
  readonly port: number
}

/**
 * Whether the server answering `send` is a cluster node (`INFO cluster` says `cluster_enabled:1`).
 * A server that refuses INFO (renamed away, or not allowed to the gateway's user) is taken for a
 * standalone one, as it was before clusters were recognised.
 */
export const clusterEnabled = async (send: (args: Array<string>) => Promise<RedisReply>): Promise<boolean> => {
  const info = await send(["INFO", "cluster"]).catch((error: unknown) => {
    if (error instanceof ErrorReply) return undefined
    throw error
  })
  return typeof info === "string" && /^cluster_enabled:1\s*$/m.test(info)
}

/**
 * What a URL says that holds for every node: the node it names, credentials, TLS. (A database
 * other than 0 never gets here: the node refuses SELECT when the server is first asked.)
 */
const parseUrl = (url: string) => {
  const parsed = new URL(url)
  const tls = parsed.protocol === "rediss:"
  return {
    node: { host: parsed.hostname.replace(/^\[(.*)\]$/, "$1"), port: Number(parsed.port || 6379) },
    tls,
    ...(parsed.username === "" ? {} : { username: decodeURIComponent(parsed.username) }),
    ...(parsed.password === "" ? {} : { password: decodeURIComponent(parsed.password) })
  }
}

/**
 * A cluster client (not yet connected) starting from the node `url` names, then from
 * `otherRoots` (the nodes a previous client knew); `nodes` are its masters as last seen.
 */
export const openCluster = (
  url: string,
  otherRoots: ReadonlyArray<ClusterNode>,
  on: LinkEvents
): { readonly link: Link; readonly nodes: () => ReadonlyArray<ClusterNode> } => {
  const { node, tls, ...credentials } = parseUrl(url)
  const rootNodes = [node, ...otherRoots.filter((other) => other.host !== node.host || other.port !== node.port)]
  const cluster = createCluster({
    rootNodes: rootNodes.map((root) => ({ socket: root })),
    defaults: {
      ...failFast,
      ...credentials,
      socket: { ...failFast.socket, tls, reconnectStrategy: reconnectForever }
    },
    topologyRefreshOnReconnectionAttemptStrategy: refreshAfterMs
  })
  // node-redis throws `error` events nobody listens to
  cluster.on("error", (cause: unknown) => on.mapUnread(cause))
  cluster.on("node-error", (cause: unknown, node: ClusterNode) => on.lost(cause, `${node.host}:${node.port}`))
  cluster.on("node-ready", (node: ClusterNode) => on.ready(`${node.host}:${node.port}`))
  cluster.on("connect", () => on.ready())
  const link: Link = {
    connect: () => cluster.connect(),
    send: (key: string, args: Array<string>, options: CommandOptions) => cluster.sendCommand<RedisReply>(key, false, args, options),
    close: () => cluster.close(),
    destroy: () => cluster.destroy()
  }
  const nodes = () => cluster.masters.map((master) => ({ host: master.host, port: master.port }))
  return { link, nodes }
}
