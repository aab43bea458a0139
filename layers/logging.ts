/**
 * Logging: `--log-format pretty|json`, to stderr (stdout stays free for what one-shot
 * commands print). The per-request logger is off; requests log only when they fail.
 */
import * as Layer from "effect/Layer"
import type * as LogLevel from "effect/LogLevel"
import * as Logger from "effect/Logger"
import * as References from "effect/References"

export type LogFormat = "pretty" | "json"

/** `level` overrides the minimum level; without it, `--log-level` (default info) applies. */
export const LoggingLive = (format: LogFormat, level?: LogLevel.LogLevel) =>
  Layer.mergeAll(
    // `Logger.consoleJson` writes with console.log whatever LogToStderr says: route it to stderr
    Logger.layer([format === "json" ? Logger.withConsoleError(Logger.formatJson) : Logger.consolePretty({ colors: false })]),
    level === undefined ? Layer.empty : Layer.succeed(References.MinimumLogLevel, level),
    Layer.succeed(Logger.LogToStderr, true)
  )
