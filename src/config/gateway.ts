/**
 * `[gateway]` -> `GatewaySettings`: the server, its limits, the cache, observability, trace
 * export, authentication, the relay to another gateway, and where templates may load other files from.
 */
import { headerProblem } from "../httpHeaders.ts"
import { type BuildContext, tableDecoder } from "./context.ts"
import { RawGateway, RawPostgres } from "./raw.ts"
import { buildRelay } from "./relay.ts"
import { buildUiOidc } from "./uiOidc.ts"
import type { DurableQueueSettings, GatewaySettings } from "./types.ts"

export const defaultBindAddress = "0.0.0.0:3000"
/** overrides `[gateway] bind_address` (and is what `--bind-address` sets) */
export const bindAddressVariable = "GATEWAY_BIND_ADDRESS"
export const defaultMaxRequestBodyBytes = 10 * 1024 * 1024
/** `[gateway.tasks] unrunnable_timeout_s` by default: a rolling deploy's few minutes */
export const defaultUnrunnableTimeoutS = 300

/** `[gateway.cache.valkey] ttl_s` when unset: a day */
export const defaultValkeyTtlS = 86_400
const MiB = 1024 * 1024
/** `[gateway.observability] max_row_bytes` by default */
export const defaultMaxRowBytes = 8 * MiB
/**
 * The largest `max_row_bytes`: a row must stay readable. The Postgres driver reads a row of at
 * most 16 MiB (@effect/sql-pg's `maxMessageSize`), and Postgres writes JSONB back with a space
 * after each `:` and `,`, up to 1.5 times the JSON stored.
 */
export const maxMaxRowBytes = 10 * MiB
/** the smallest `max_row_bytes`: room for a row's fixed fields and the markers of what was cut */
export const minMaxRowBytes = 64 * 1024

/**
 * `[gateway.observability.durable_queue]`, undefined unless `path` is set. Its bound is the
 * queue's plus two segments by default: a segment is deleted only once all its units are
 * written, so the log holds the queued rows plus at most the written part of its oldest and
 * newest segments.
 */
const durableQueueOf = (
  raw: NonNullable<NonNullable<RawGateway["observability"]>["durable_queue"]> | undefined,
  maxQueuedBytes: number
): DurableQueueSettings | undefined => {
  if (raw?.path === undefined || raw.path === "") return undefined
  const segmentBytes = raw.segment_bytes ?? 16 * MiB
  return {
    path: raw.path,
    fsync: raw.fsync ?? "batch",
    fsyncIntervalMs: raw.fsync_interval_ms ?? 100,
    segmentBytes,
    maxBytes: raw.max_bytes ?? maxQueuedBytes + 2 * segmentBytes,
    replayIntervalMs: raw.replay_interval_ms ?? 30_000
  }
}

const decodeGateway = tableDecoder(RawGateway)
const decodePostgres = tableDecoder(RawPostgres)

/**
 * `[postgres]` as TensorZero wrote it: the pool size is honoured; whether Postgres is used is
 * decided here by GATEWAY_RELATIONAL_DB_URL and GATEWAY_ANALYTICS_DB_URL, so `enabled` only warns.
 */
const postgresPoolSizeOf = (context: BuildContext, table: unknown): number | undefined => {
  const raw = context.decodeAt(decodePostgres, table, ["postgres"]) ?? {}
  if (raw.enabled !== undefined) {
    context.warn(
      ["postgres", "enabled"],
      "ignored: Postgres is used when GATEWAY_RELATIONAL_DB_URL (keys, rate limits, tasks) or GATEWAY_ANALYTICS_DB_URL (a postgres:// URL) names it"
    )
  }
  return raw.connection_pool_size
}

export const parseBindAddress = (text: string): { readonly host: string; readonly port: number } | undefined => {
  const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(text)
  if (match === null) return undefined
  const port = Number(match[2])
  if (port > 65535) return undefined
  return { host: match[1].replace(/^\[(.*)\]$/, "$1"), port }
}

export interface TemplateFilesystemAccess {
  readonly enabled: boolean
  /** the folder `{% include %}` names resolve against; undefined: the folder of the file naming the template */
  readonly folder: string | undefined
}

export interface BuiltGateway {
  readonly settings: GatewaySettings
  readonly templateAccess: TemplateFilesystemAccess
}

const bindAddressOf = (context: BuildContext, configured: string | undefined) => {
  const fromEnv = context.input.env[bindAddressVariable]
  const text = fromEnv ?? configured ?? defaultBindAddress
  const parsed = parseBindAddress(text)
  if (parsed !== undefined) return parsed
  context.report(
    fromEnv !== undefined ? [] : ["gateway", "bind_address"],
    `${fromEnv !== undefined ? `${bindAddressVariable}: ` : ""}expected HOST:PORT, got "${text}"`
  )
  return { host: "0.0.0.0", port: 3000 }
}

const basePathOf = (context: BuildContext, configured: string | undefined): string => {
  const basePath = configured === undefined ? "" : configured.replace(/\/+$/, "")
  if (basePath !== "" && !/^(\/[A-Za-z0-9._~!$&'()*+,;=:@-]+)+$/.test(basePath)) {
    context.report(["gateway", "base_path"], `expected a path such as "/gateway" (segments of URL path characters), got "${configured}"`)
  }
  return basePath
}

/**
 * `template_filesystem_access`: `true`, or `{ base_path = "..." }` (base_path alone enables
 * access, as in TensorZero). TensorZero deprecated `enabled` and, before it, the flag
 * `enable_template_filesystem_access`: both are still accepted, with a warning.
 */
const templateAccessOf = (
  context: BuildContext,
  access: RawGateway["template_filesystem_access"],
  legacy: boolean | undefined
): TemplateFilesystemAccess => {
  const keyPath = ["gateway", "template_filesystem_access"]
  if (legacy !== undefined) {
    if (access === undefined) {
      context.warn(
        ["gateway", "enable_template_filesystem_access"],
        `deprecated: use template_filesystem_access.base_path (base_path = "." for the configuration file's folder)`
      )
      return { enabled: legacy, folder: undefined }
    }
    // the rest is checked as if only the replacement were set
    context.report(["gateway", "enable_template_filesystem_access"], "set template_filesystem_access only (enable_template_filesystem_access is its deprecated form)")
  }
  if (access === undefined || typeof access === "boolean") return { enabled: access ?? false, folder: undefined }
  if (access.enabled !== undefined) {
    context.warn(
      [...keyPath, "enabled"],
      access.base_path === undefined
        ? `deprecated: base_path alone enables access (base_path = "." for the configuration file's folder)`
        : `deprecated: base_path alone enables access${access.enabled ? "" : ", so access is on"}`
    )
  }
  return access.base_path === undefined
    ? { enabled: access.enabled ?? false, folder: undefined }
    : { enabled: true, folder: context.resolvePath([...keyPath, "base_path"], access.base_path) }
}

/** `[gateway]`, with TensorZero's top-level `[postgres]` (`postgresTable`), which sets a process-wide setting too */
export const buildGateway = (context: BuildContext, table: unknown, postgresTable: unknown = {}): BuiltGateway => {
  const raw = context.decodeAt(decodeGateway, table, ["gateway"]) ?? {}
  const bindAddress = bindAddressOf(context, raw.bind_address)
  const basePath = basePathOf(context, raw.base_path)
  const templateAccess = templateAccessOf(context, raw.template_filesystem_access, raw.enable_template_filesystem_access)
  const traceHeaders = raw.export?.otlp?.traces?.extra_headers ?? {}
  for (const [name, value] of Object.entries(traceHeaders)) {
    const problem = headerProblem(name, value)
    if (problem !== undefined) context.report(["gateway", "export", "otlp", "traces", "extra_headers", name], problem)
  }
  const observability = raw.observability
  const maxRowBytes = observability?.max_row_bytes ?? defaultMaxRowBytes
  const maxQueuedBytes = observability?.max_queued_bytes ?? 256 * 1024 * 1024
  if (maxRowBytes < minMaxRowBytes || maxRowBytes > maxMaxRowBytes) {
    context.report(
      ["gateway", "observability", "max_row_bytes"],
      `expected ${minMaxRowBytes} to ${maxMaxRowBytes} bytes (a stored row must stay readable: the Postgres driver reads rows of at most 16 MiB), got ${maxRowBytes}`
    )
  }
  return {
    templateAccess,
    settings: {
      bindAddress,
      basePath,
      debug: raw.debug ?? false,
      maxRequestBodyBytes: raw.max_request_body_bytes ?? defaultMaxRequestBodyBytes,
      maxRequestBytesInFlight: raw.max_request_bytes_in_flight ?? 256 * 1024 * 1024,
      maxConnections: raw.max_connections ?? 4096,
      workers: raw.workers ?? 1,
      overheadHeader: raw.overhead_header ?? false,
      unsupportedBuiltinTools: raw.unsupported_builtin_tools ?? "drop",
      // under the idle timeouts of common proxies and load balancers (60 s), as Anthropic pings
      streamKeepaliveMs: raw.stream_keepalive_ms ?? 15_000,
      metrics: { requireAuth: raw.metrics?.require_auth ?? false },
      // a working day; signing in again starts another
      ui: { enabled: raw.ui?.enabled ?? true, sessionTtlS: raw.ui?.session_ttl_s ?? 12 * 60 * 60, oidc: buildUiOidc(context, raw.ui?.oidc, raw.auth?.enabled ?? false) },
      requestReadTimeoutMs: raw.request_read_timeout_ms ?? 60_000,
      // off: a process behind no load balancer stops at once; a load balancer's deregistration delay is the operator's to match
      drainDelayMs: raw.drain_delay_ms ?? 0,
      globalOutboundHttpTimeoutMs: raw.global_outbound_http_timeout_ms ?? 900_000,
      maxProviderResponseBytes: raw.max_provider_response_bytes ?? 32 * 1024 * 1024,
      maxProviderStreamEventBytes: raw.max_provider_stream_event_bytes ?? 4 * 1024 * 1024,
      cache: {
        shareAcrossApiKeys: raw.cache?.share_across_api_keys ?? false,
        lookupTimeoutMs: raw.cache?.lookup_timeout_ms ?? 1000,
        backend: raw.cache?.backend ?? "auto",
        valkeyTtlS: raw.cache?.valkey?.ttl_s ?? defaultValkeyTtlS
      },
      batch: { pollIntervalS: raw.batch?.poll_interval_s ?? 60 },
      tasks: { unrunnableTimeoutS: raw.tasks?.unrunnable_timeout_s ?? defaultUnrunnableTimeoutS },
      templateFilesystemAccess: templateAccess.enabled,
      dummyShorthands: raw.dummy_shorthands ?? true,
      observability: {
        enabled: observability?.enabled ?? true,
        backend: observability?.backend ?? "auto",
        disableAutomaticMigrations: observability?.disable_automatic_migrations ?? false,
        maxRows: observability?.batch_writes?.max_rows ?? 10_000,
        maxBatchBytes: observability?.batch_writes?.max_bytes ?? 16 * 1024 * 1024,
        flushIntervalMs: observability?.batch_writes?.flush_interval_ms ?? 1000,
        maxQueued: observability?.max_queued_writes ?? 100_000,
        maxQueuedBytes,
        maxRowBytes,
        durableQueue: durableQueueOf(observability?.durable_queue, maxQueuedBytes)
      },
      embeddedDatabase: {
        minFreeBytes: raw.embedded_database?.min_free_bytes,
        freeSpaceCheckIntervalMs: raw.embedded_database?.free_space_check_interval_ms ?? 1000
      },
      traceExport: {
        enabled: raw.export?.otlp?.traces?.enabled ?? false,
        extraHeaders: traceHeaders,
        sampleRatio: raw.export?.otlp?.traces?.sample_ratio ?? 1
      },
      auth: {
        enabled: raw.auth?.enabled ?? false,
        cacheTtlMs: raw.auth?.cache_ttl_ms ?? 1000,
        maxFailedAttemptsPerMinute: raw.auth?.max_failed_attempts_per_minute ?? 100
      },
      relay: buildRelay(context, raw.relay),
      errorJson: raw.unstable_error_json ?? false,
      postgresPoolSize: postgresPoolSizeOf(context, postgresTable)
    }
  }
}
