#!/usr/bin/env node
/**
 * The `gateway` command: its flags and subcommands, the checks of how they combine, and the
 * exit code of what ran. What each runs (serving, validation, migrations, API keys, evaluate,
 * optimize export, migrate-data, import-tensorzero) is a program in layers/commands/. One-shot operations are also
 * subcommands that run the same program as their flags (`gateway migrate` = `gateway --run-migrations-only`).
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Cause from "effect/Cause"
import * as CliError from "effect/cli/CliError"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { ServeError } from "effect/http/HttpServerError"
import * as Option from "effect/Option"
import type * as Runtime from "effect/Runtime"
import { gatewayVersion } from "../layers/http/status.ts"
import { bindAddressVariable, parseBindAddress } from "../src/config/gateway.ts"
import { relationalUrlVariable } from "../src/relational.ts"
import { analyticsUrlVariable } from "../src/analytics/stores.ts"
import { defaultWorkspace, workspaceNameProblem } from "../src/workspace.ts"
import type { EvaluationRunRequest } from "../src/api/evaluations.ts"
import { parseEvaluatorNumbers } from "../src/evaluations/statistics.ts"
import { currentWorker, parseWorkers } from "../layers/cluster.ts"
import { apiKeyCreate, apiKeyDisable } from "../layers/commands/apiKeys.ts"
import { ExitWith, failWith } from "../layers/commands/exit.ts"
import { evaluate } from "../layers/commands/evaluate.ts"
import { evaluateFlagOf } from "../layers/commands/evaluateFlags.ts"
import { type Database, migrate, migrationFlagOf } from "../layers/commands/migrate.ts"
import { migrateData } from "../layers/commands/migrateData.ts"
import { importTensorzero } from "../layers/commands/importTensorzero.ts"
import { auditList } from "../layers/commands/audit.ts"
import { budgetDelete, budgetList, budgetSet } from "../layers/commands/budgets.ts"
import { optimizeExport } from "../layers/commands/optimizeExport.ts"
import { serve } from "../layers/commands/serve.ts"
import { validate } from "../layers/commands/validate.ts"

const usage = "usage: gateway (--config-file <path or glob> | --default-config) [--bind-address <host:port>] [--workers <n>|auto] [--watch-config] [--log-format pretty|json]\n" +
  "       gateway (--config-file <path or glob> | --default-config) --validate-and-exit\n" +
  "       gateway (--run-migrations-only | --run-migrations | --run-clickhouse-migrations | --run-postgres-migrations) [--config-file <path or glob>]\n" +
  "       gateway --create-api-key [--expiration <UTC timestamp>] [--admin] [--workspace <name> | --global] | --disable-api-key <public_id>\n" +
  "       gateway migrate [--config-file <path or glob>] | gateway api-key (create [--expiration ...] | disable <public_id>)\n" +
  "       gateway evaluate --config-file <path> (--function-name F [--evaluator-names a,b] | --evaluation-name E) (--dataset-name D | --datapoint-ids id,...) [--workspace <name>] [...]\n" +
  "       gateway optimize export <task_id> --dir <folder> [--workspace <name>] | gateway migrate-data --from pglite://<folder> --to postgres://...\n" +
  "       gateway import-tensorzero --from <TensorZero's postgres:// or ClickHouse http(s):// URL> [--to <url>] [--workspace <name>] [--dry-run] [--strict] [--copy-files] [--page-rows <n>]\n" +
  "       gateway audit list [--workspace <name>] [--actor <id>] [--action <name>] [--since <time>] [--until <time>] [--limit <n>]\n" +
  "       gateway budget (list | set --scope api_key|workspace|tag [--key <tag>] [--value <v>] --period day|week|month|total --limit <amount> | delete <id>) [--workspace <name>]\n" +
  "run `gateway --help` for every option"

const configFileFlag = Flag.String("config-file").pipe(
  Flag.withDescription("TOML configuration file, or a glob such as config/**/*.toml whose matches are merged"),
  Flag.optional
)
const configPathFlag = Flag.String("config-path").pipe(Flag.withDescription("same as --config-file"), Flag.optional)
const defaultConfigFlag = Flag.Boolean("default-config").pipe(
  Flag.withDescription("run without a configuration file: only short-hand model names (<provider_type>::<model>)"),
  Flag.withDefault(false)
)
const logFormatFlag = Flag.Literals("log-format", ["pretty", "json"]).pipe(
  Flag.withDescription("log format"),
  Flag.withDefault("pretty" as const)
)
const workersFlag = Flag.String("workers").pipe(
  Flag.withDescription("processes serving the port: a number, or auto (one per core); overrides [gateway] workers"),
  Flag.optional
)
const watchConfigFlag = Flag.Boolean("watch-config").pipe(
  Flag.withDescription("reload the configuration when one of its files (or a template or schema it names) changes, as SIGHUP does"),
  Flag.withDefault(false)
)
const runMigrationsOnlyFlag = Flag.Boolean("run-migrations-only").pipe(
  Flag.withDescription("apply pending database migrations and exit"),
  Flag.withDefault(false)
)
/** TensorZero's flags: its names, our databases (docs/running.md: TensorZero's flags) */
const tensorZeroFlags = {
  runMigrations: Flag.Boolean("run-migrations").pipe(Flag.withDescription("same as --run-migrations-only"), Flag.withDefault(false)),
  runClickhouseMigrations: Flag.Boolean("run-clickhouse-migrations").pipe(
    Flag.withDescription(`apply the analytical database's migrations (${analyticsUrlVariable}: ClickHouse, or Postgres) and exit`),
    Flag.withDefault(false)
  ),
  runPostgresMigrations: Flag.Boolean("run-postgres-migrations").pipe(
    Flag.withDescription(`apply the relational database's migrations (${relationalUrlVariable}: API keys, rate limits, tasks) and exit`),
    Flag.withDefault(false)
  ),
  validateAndExit: Flag.Boolean("validate-and-exit").pipe(
    Flag.withDescription("validate the configuration, print its problems, and exit: 0 when valid, 1 when not (no database, no port)"),
    Flag.withDefault(false)
  ),
  bindAddress: Flag.String("bind-address").pipe(
    Flag.withDescription(`host:port to listen on; overrides ${bindAddressVariable} and [gateway] bind_address`),
    Flag.optional
  )
}

const sharedFlags = {
  configFile: configFileFlag,
  configPath: configPathFlag,
  defaultConfig: defaultConfigFlag,
  logFormat: logFormatFlag
}

/**
 * `--bind-address` sets GATEWAY_BIND_ADDRESS, which the configuration reads and workers inherit
 * (cluster.fork copies this process's environment). A worker, which parses the same argv, keeps
 * the variable as the primary gave it: with port 0 the primary replaces it, for the workers
 * after the first, with the port the first got.
 */
const applyBindAddress = (address: Option.Option<string>) =>
  Effect.sync(() => {
    if (Option.isSome(address) && currentWorker() === undefined) process.env[bindAddressVariable] = address.value
  })

interface OneShotFlags {
  readonly runMigrationsOnly: boolean
  readonly runMigrations: boolean
  readonly runClickhouseMigrations: boolean
  readonly runPostgresMigrations: boolean
  readonly validateAndExit: boolean
  readonly createApiKey: boolean
  readonly disableApiKey: Option.Option<string>
}

const givenFlags = (entries: ReadonlyArray<readonly [string, boolean]>) => entries.filter(([, given]) => given).map(([name]) => name)

const migrationFlagsOf = (flags: OneShotFlags) =>
  givenFlags([
    ["--run-migrations-only", flags.runMigrationsOnly],
    ["--run-migrations", flags.runMigrations],
    [migrationFlagOf.analytical, flags.runClickhouseMigrations],
    [migrationFlagOf.relational, flags.runPostgresMigrations]
  ])

/** the databases the migration flags name alone; undefined: every configured one (--run-migrations[-only], with or beside them) */
const migrationTargets = (flags: OneShotFlags): ReadonlyArray<Database> | undefined =>
  flags.runMigrationsOnly || flags.runMigrations
    ? undefined
    : givenFlags([["analytical", flags.runClickhouseMigrations], ["relational", flags.runPostgresMigrations]]) as Array<Database>

/**
 * Why the one-shot flags cannot run together, if they cannot: one operation at a time (the
 * migration flags make one), and the serving flags only with serving or --validate-and-exit.
 */
const flagConflict = (
  flags: OneShotFlags & { readonly workers: Option.Option<string>; readonly bindAddress: Option.Option<string>; readonly watchConfig: boolean }
) => {
  const migrations = migrationFlagsOf(flags)
  const operations = givenFlags([
    ["--validate-and-exit", flags.validateAndExit],
    [migrations[0], migrations.length > 0],
    ["--create-api-key", flags.createApiKey],
    ["--disable-api-key", Option.isSome(flags.disableApiKey)]
  ])
  if (operations.length > 1) return `${operations[0]} and ${operations[1]} exclude each other`
  const serving = givenFlags([["--bind-address", Option.isSome(flags.bindAddress)], ["--workers", Option.isSome(flags.workers)]])
  if (serving.length > 0 && operations.length > 0 && !flags.validateAndExit) return `${serving[0]} goes with serving, not with ${operations[0]}`
  if (flags.watchConfig && operations.length > 0) return `--watch-config goes with serving, not with ${operations[0]}`
  return undefined
}

const expirationFlag = Flag.String("expiration").pipe(
  Flag.withDescription("with --create-api-key: when the key stops working, a UTC timestamp such as 2026-12-31T23:59:59Z"),
  Flag.optional
)

const adminFlag = Flag.Boolean("admin").pipe(
  Flag.withDescription("with --create-api-key: the key has the admin role, which the web UI requires"),
  Flag.withDefault(false)
)

const workspaceFlag = Flag.String("workspace").pipe(
  Flag.withDescription("with --create-api-key: the workspace the key belongs to (default: default)"),
  Flag.optional
)

const globalFlag = Flag.Boolean("global").pipe(
  Flag.withDescription("with --create-api-key --admin: a global admin, who acts on any workspace (named by the gateway-workspace header)"),
  Flag.withDefault(false)
)

const gateway = Command.make(
  "gateway",
  {
    ...sharedFlags,
    runMigrationsOnly: runMigrationsOnlyFlag,
    ...tensorZeroFlags,
    workers: workersFlag,
    watchConfig: watchConfigFlag,
    createApiKey: Flag.Boolean("create-api-key").pipe(
      Flag.withDescription("create an API key, print it on stdout and exit"),
      Flag.withDefault(false)
    ),
    expiration: expirationFlag,
    admin: adminFlag,
    workspace: workspaceFlag,
    global: globalFlag,
    disableApiKey: Flag.String("disable-api-key").pipe(
      Flag.withDescription("disable the API key with this public id and exit"),
      Flag.optional
    )
  },
  (flags) => {
    // two operations given together (or --expiration with --disable-api-key) must not run half of what was asked
    const conflict = flagConflict(flags)
    if (conflict !== undefined) return failWith(2, [conflict, usage])
    if (flags.createApiKey) return apiKeyCreate(flags, flags.logFormat)
    if (Option.isSome(flags.expiration)) return failWith(2, ["--expiration goes with --create-api-key", usage])
    if (flags.admin) return failWith(2, ["--admin goes with --create-api-key", usage])
    if (Option.isSome(flags.workspace)) return failWith(2, ["--workspace goes with --create-api-key", usage])
    if (flags.global) return failWith(2, ["--global goes with --create-api-key", usage])
    if (Option.isSome(flags.disableApiKey)) return apiKeyDisable(flags.disableApiKey.value, flags.logFormat)
    if (migrationFlagsOf(flags).length > 0) return migrate(flags, migrationTargets(flags))
    if (Option.isNone(flags.configFile) && Option.isNone(flags.configPath) && !flags.defaultConfig) {
      return failWith(2, [
        flags.validateAndExit
          ? "--validate-and-exit needs --config-file or --default-config"
          : "one of --config-file, --default-config or --run-migrations-only is required",
        usage
      ])
    }
    if ((Option.isSome(flags.configFile) || Option.isSome(flags.configPath)) && flags.defaultConfig) {
      return failWith(2, ["--default-config and --config-file exclude each other", usage])
    }
    const workers = Option.map(flags.workers, parseWorkers)
    if (Option.isSome(workers) && workers.value === undefined) {
      return failWith(2, [`--workers expects a positive integer or auto, got "${Option.getOrThrow(flags.workers)}"`, usage])
    }
    if (Option.isSome(flags.bindAddress) && parseBindAddress(flags.bindAddress.value) === undefined) {
      return failWith(2, [`--bind-address expects HOST:PORT (an IPv6 host in brackets), got "${flags.bindAddress.value}"`, usage])
    }
    return Effect.andThen(
      applyBindAddress(flags.bindAddress),
      () => flags.validateAndExit ? validate(flags) : serve(flags, Option.getOrUndefined(workers), flags.watchConfig)
    )
  }
).pipe(Command.withDescription("An LLM inference gateway"))

const migrateCommand = Command.make("migrate", sharedFlags, (flags) => migrate(flags)).pipe(
  Command.withDescription("apply pending database migrations and exit (same as --run-migrations-only)")
)

const listFlag = (name: string, description: string) => Flag.String(name).pipe(Flag.withDescription(description), Flag.optional)
const commaList = (text: Option.Option<string>) =>
  Option.map(text, (list) => list.split(",").map((item) => item.trim()).filter((item) => item !== ""))

const evaluateCommand = Command.make(
  "evaluate",
  {
    ...sharedFlags,
    functionName: listFlag(evaluateFlagOf.function_name, "the function to evaluate (or --evaluation-name)"),
    evaluatorNames: listFlag(evaluateFlagOf.evaluator_names, "comma-separated evaluators of the function or evaluation (default: all)"),
    evaluationName: listFlag(evaluateFlagOf.evaluation_name, "a configured [evaluations.<name>]: its function and evaluators"),
    datasetName: listFlag(evaluateFlagOf.dataset_name, "evaluate every live datapoint of the function in this dataset"),
    datapointIds: listFlag(evaluateFlagOf.datapoint_ids, "or these datapoints (comma-separated ids)"),
    variantName: listFlag(evaluateFlagOf.variant_name, "the variant to run (default: one drawn by weight)"),
    concurrency: Flag.Int(evaluateFlagOf.concurrency).pipe(Flag.withDescription("inferences at once"), Flag.withDefault(10)),
    maxDatapoints: Flag.Int(evaluateFlagOf.max_datapoints).pipe(Flag.withDescription("evaluate the first N datapoints only"), Flag.optional),
    inferenceCache: Flag.Literals(evaluateFlagOf.inference_cache, ["on", "off", "read_only", "write_only"]).pipe(
      Flag.withDescription("the inference cache's use by the run"),
      Flag.withDefault("on" as const)
    ),
    cutoffs: listFlag(evaluateFlagOf.cutoffs, "evaluator=mean pairs (a=0.8,b=0.5): exit 1 when a mean misses its cutoff"),
    precision: listFlag(evaluateFlagOf.adaptive_stopping_precision, "evaluator=half-width pairs: stop once each 95% CI half-width is below it"),
    workspace: Flag.String("workspace").pipe(
      Flag.withDescription("the workspace the run acts in: its datasets, and where its inferences, feedback and record are stored"),
      Flag.withDefault(defaultWorkspace)
    ),
    format: Flag.Literals("format", ["pretty", "jsonl"]).pipe(Flag.withDescription("pretty: a summary table; jsonl: one line per result, then the summary"), Flag.withDefault("pretty" as const))
  },
  (flags) =>
    Effect.gen(function*() {
      const numbers = (flag: string, text: Option.Option<string>) => {
        if (Option.isNone(text)) return undefined
        const parsed = parseEvaluatorNumbers(text.value, `--${flag}`)
        return "problem" in parsed ? failWith(2, [parsed.problem as string, usage]) : Effect.succeed(parsed)
      }
      const cutoffs = numbers(evaluateFlagOf.cutoffs, flags.cutoffs)
      const precision = numbers(evaluateFlagOf.adaptive_stopping_precision, flags.precision)
      const badWorkspace = workspaceNameProblem(flags.workspace, "--workspace")
      if (badWorkspace !== undefined) return yield* failWith(2, [badWorkspace, usage])
      if (flags.concurrency < 1) return yield* failWith(2, [`--${evaluateFlagOf.concurrency} must be a positive integer`, usage])
      if (Option.isSome(flags.maxDatapoints) && flags.maxDatapoints.value < 1) {
        return yield* failWith(2, [`--${evaluateFlagOf.max_datapoints} must be a positive integer`, usage])
      }
      const request: EvaluationRunRequest = {
        function_name: Option.getOrUndefined(flags.functionName),
        evaluator_names: Option.getOrUndefined(commaList(flags.evaluatorNames)),
        evaluation_name: Option.getOrUndefined(flags.evaluationName),
        dataset_name: Option.getOrUndefined(flags.datasetName),
        datapoint_ids: Option.getOrUndefined(commaList(flags.datapointIds)),
        variant_name: Option.getOrUndefined(flags.variantName),
        concurrency: flags.concurrency,
        max_datapoints: Option.getOrUndefined(flags.maxDatapoints),
        inference_cache: flags.inferenceCache,
        cutoffs: cutoffs === undefined ? undefined : yield* cutoffs,
        adaptive_stopping_precision: precision === undefined ? undefined : yield* precision
      }
      return yield* evaluate(flags, request, flags.format, flags.workspace)
    })
).pipe(Command.withDescription("run an evaluation: the function on a dataset's datapoints, scored by evaluators"))

const optimizeExportCommand = Command.make(
  "export",
  {
    taskId: Argument.String("task_id").pipe(Argument.withDescription("a completed GEPA task")),
    dir: Flag.String("dir").pipe(Flag.withDescription("the folder to write gateway.toml and the template files into")),
    workspace: Flag.String("workspace").pipe(
      Flag.withDescription("the workspace the task was launched in (default: default); another workspace's task is not found"),
      Flag.withDefault(defaultWorkspace)
    ),
    logFormat: logFormatFlag
  },
  (flags) => optimizeExport(flags.taskId, flags.dir, flags.workspace, flags.logFormat)
).pipe(Command.withDescription("write the variants a completed GEPA task found as configuration files"))

const migrateDataCommand = Command.make(
  "migrate-data",
  {
    from: Flag.String("from").pipe(Flag.withDescription("where the data is: a pglite://<folder> (or a postgres:// URL)")),
    to: Flag.String("to").pipe(Flag.withDescription("the Postgres server to move it to: a postgres:// URL of an empty database")),
    logFormat: logFormatFlag
  },
  (flags) => migrateData(flags.from, flags.to, flags.logFormat)
).pipe(Command.withDescription("copy every stored row from an embedded database (or another Postgres) into an empty Postgres database"))

const importTensorzeroCommand = Command.make(
  "import-tensorzero",
  {
    from: Flag.String("from").pipe(Flag.withDescription("the TensorZero database to read: its Postgres (postgres://...) or its ClickHouse (http(s)://user:password@host:port/database)")),
    to: Flag.String("to").pipe(
      Flag.withDescription(`the database to import into, for both ${analyticsUrlVariable} and ${relationalUrlVariable} (default: those variables)`),
      Flag.optional
    ),
    workspace: Flag.String("workspace").pipe(Flag.withDescription("the workspace the imported records and keys belong to (default: default)"), Flag.withDefault(defaultWorkspace)),
    dryRun: Flag.Boolean("dry-run").pipe(Flag.withDescription("read and map everything, print the summary, write nothing"), Flag.withDefault(false)),
    strict: Flag.Boolean("strict").pipe(Flag.withDescription("stop at the first row that cannot be imported, instead of skipping and reporting it"), Flag.withDefault(false)),
    copyFiles: Flag.Boolean("copy-files").pipe(
      Flag.withDescription("copy the input files TensorZero kept in object storage into this gateway's [object_storage] (needs --config-file)"),
      Flag.withDefault(false)
    ),
    pageRows: Flag.Int("page-rows").pipe(
      Flag.withDescription("rows read per page (default: 1,000 inferences, fewer for larger records): memory grows with it"),
      Flag.optional
    ),
    configFile: configFileFlag,
    configPath: configPathFlag,
    defaultConfig: defaultConfigFlag,
    logFormat: logFormatFlag
  },
  (flags) => importTensorzero(flags)
).pipe(Command.withDescription("import a TensorZero deployment's stored data (inferences, feedback, datasets, evaluations, batches, DICL examples, API keys)"))

const optimizeCommand = Command.make("optimize").pipe(
  Command.withDescription("prompt optimization tasks"),
  Command.withSubcommands([optimizeExportCommand])
)

const apiKeyCreateCommand = Command.make(
  "create",
  { expiration: expirationFlag, admin: adminFlag, workspace: workspaceFlag, global: globalFlag, logFormat: logFormatFlag },
  (flags) => apiKeyCreate(flags, flags.logFormat)
).pipe(Command.withDescription("create an API key and print it (same as --create-api-key)"))

const apiKeyDisableCommand = Command.make(
  "disable",
  { publicId: Argument.String("public_id").pipe(Argument.withDescription("the 12-character public id of the key")), logFormat: logFormatFlag },
  (flags) => apiKeyDisable(flags.publicId, flags.logFormat)
).pipe(Command.withDescription("disable an API key (same as --disable-api-key)"))

const auditListCommand = Command.make(
  "list",
  {
    workspace: Flag.String("workspace").pipe(Flag.withDescription("one workspace's entries (default: every workspace's)"), Flag.optional),
    actor: Flag.String("actor").pipe(Flag.withDescription("one actor's entries: a key's public id, or an OS user"), Flag.optional),
    action: Flag.String("action").pipe(Flag.withDescription("one action's entries, e.g. api_key.create"), Flag.optional),
    since: Flag.String("since").pipe(Flag.withDescription("entries at or after this RFC 3339 time"), Flag.optional),
    until: Flag.String("until").pipe(Flag.withDescription("entries before this RFC 3339 time"), Flag.optional),
    limit: Flag.Int("limit").pipe(Flag.withDescription("at most this many entries, newest first"), Flag.withDefault(100)),
    logFormat: logFormatFlag
  },
  (flags) => auditList(flags, flags.logFormat)
).pipe(Command.withDescription("print the audit log's entries as JSON Lines, newest first"))

const auditCommand = Command.make("audit").pipe(
  Command.withDescription("the audit log of administrative acts"),
  Command.withSubcommands([auditListCommand])
)

const budgetWorkspaceFlag = Flag.String("workspace").pipe(
  Flag.withDescription("the workspace whose budgets these are (default: default)"),
  Flag.withDefault(defaultWorkspace)
)

const budgetListCommand = Command.make(
  "list",
  { workspace: budgetWorkspaceFlag, logFormat: logFormatFlag },
  (flags) => budgetList(flags.workspace, flags.logFormat)
).pipe(Command.withDescription("print the workspace's budgets set at run time as JSON Lines"))

const budgetSetCommand = Command.make(
  "set",
  {
    workspace: budgetWorkspaceFlag,
    scope: Flag.String("scope").pipe(Flag.withDescription("api_key (a key of the workspace), workspace, or tag")),
    key: Flag.String("key").pipe(Flag.withDescription("a tag scope's key"), Flag.optional),
    value: Flag.String("value").pipe(Flag.withDescription("an api_key scope's public id, or a tag scope's value (or gateway::each)"), Flag.optional),
    period: Flag.String("period").pipe(Flag.withDescription("day, week or month (UTC), or total")),
    limit: Flag.String("limit").pipe(Flag.withDescription("the most a period may spend, in the providers' currency")),
    logFormat: logFormatFlag
  },
  (flags) => budgetSet(flags, flags.logFormat)
).pipe(Command.withDescription("set (create or change) the workspace's budget of a scope and period, and print it"))

const budgetDeleteCommand = Command.make(
  "delete",
  {
    id: Argument.String("id").pipe(Argument.withDescription("the budget's id, as listed")),
    workspace: budgetWorkspaceFlag,
    logFormat: logFormatFlag
  },
  (flags) => budgetDelete(flags.id, flags.workspace, flags.logFormat)
).pipe(Command.withDescription("delete one of the workspace's budgets set at run time"))

const budgetCommand = Command.make("budget").pipe(
  Command.withDescription("budgets set at run time (as /v1/budgets)"),
  Command.withSubcommands([budgetListCommand, budgetSetCommand, budgetDeleteCommand])
)

const apiKeyCommand = Command.make("api-key").pipe(
  Command.withDescription("create or disable API keys"),
  Command.withSubcommands([apiKeyCreateCommand, apiKeyDisableCommand])
)

// Exit 0 after a graceful stop on SIGTERM/SIGINT; the code of an ExitWith; 1 for anything else.
const teardown: Runtime.Teardown = (exit, onExit) => {
  if (Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause)) return onExit(0)
  const error = Cause.squash(exit.cause)
  if (error instanceof ExitWith) return onExit(error.code)
  // the command line was wrong: effect/cli printed what and the help already
  if (CliError.isCliError(error)) return onExit(2)
  // the bind address is taken or not ours: one line, not a stack trace
  if (error instanceof ServeError) {
    const cause = error.cause as { message?: string } | undefined
    console.error(`cannot listen on the bind address: ${cause?.message ?? String(error.cause)}`)
    return onExit(1)
  }
  console.error(Cause.pretty(exit.cause))
  onExit(1)
}

gateway.pipe(
  Command.withSubcommands([migrateCommand, apiKeyCommand, auditCommand, budgetCommand, evaluateCommand, optimizeCommand, migrateDataCommand, importTensorzeroCommand]),
  Command.run({ version: gatewayVersion }),
  Effect.provide(NodeServices.layer),
  NodeRuntime.runMain({ disableErrorReporting: true, teardown })
)
