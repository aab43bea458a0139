/**
 * The layer ladder of src/, layers/ and bin/, checked by `npm test` (scripts/checkLayers.ts):
 * no import cycle (type imports included), and each module imports only from its own layer or
 * the layers below it. The picture is docs/code-map.md's "Layers"; a new module belongs to the
 * layer its folder (or, for the few plain-type modules inside a higher folder, its path) says.
 *
 * Bottom to top:
 *   base       plain helpers with no knowledge of the gateway's concepts
 *   domain     plain types and Schemas: the inference vocabulary, the request and answer Schemas
 *              of every route (src/api), the configuration as written and as validated, costs,
 *              extra_body edits, the template engine, rate-limit rules
 *   providers  the codecs, the wire clients and the registry
 *   ports      what the engine and use cases reach through Effect services: the cache, rate
 *              limits, metrics, background tasks, the databases' stores (one port per capability)
 *   config     TOML to the gateway's configuration (never imports the engine or the contract)
 *   engine     one inference: prepare, sample a variant, call models, validate the output
 *   usecases   the inference service, embeddings, batch, datasets, evaluations, DICL,
 *              experimentation, optimization, feedback, tracing, the UI's reads, and each
 *              surface's wire format of an inference (native/: /inference's; openaiCompatible/)
 *   contract   the HttpApi definition (src/contract), imported by the shell and the UI only
 *   shell      layers/ (implementations, HTTP handlers, commands) and bin/
 */
const layers = [
  ["base", [
    "^src/(errors|ids|decode|time|jsonSchema|jsonShape|transport|httpHeaders|isRecord|untrusted|seededRandom|eventLoop|storeError|promptText|streams|throttledWarning|sseWriter)[.]ts$",
    "^src/jsonSchema/"
  ]],
  ["domain", [
    "^src/api/",
    "^src/inference/(types|params|cost|extraBody|output|chunks|variantDraw|templates|plainTemplate)[.]ts$",
    "^src/config/(types|raw|credentials)[.]ts$",
    "^src/auth/(apiKey|oidcRules)[.]ts$",
    "^src/workspace[.]ts$",
    "^src/evaluations/names[.]ts$",
    "^src/ratelimit/rules[.]ts$",
    "^src/budgets/(budget|estimate)[.]ts$"
  ]],
  ["providers", ["^src/providers/"]],
  ["ports", [
    "^src/(cache|ratelimit|budgets|metrics|tasks|analytics|objectStorage)/",
    "^src/relational[.]ts$",
    "^src/[^/]+/([a-z]+S|s)tore[.]ts$"
  ]],
  ["config", ["^src/config/"]],
  ["engine", ["^src/inference/(?!service[.]ts$)", "^src/services[.]ts$"]],
  ["usecases", [
    "^src/inference/service[.]ts$",
    "^src/native/",
    "^src/(auth|audit|batch|datasets|dicl|embeddings|evaluations|experimentation|feedback|storedInferences|openaiCompatible|anthropicMessages|openaiResponses|optimization|overview|tracing|workflowEvaluations|tensorzeroImport)/"
  ]],
  ["contract", ["^src/contract/"]],
  ["shell", ["^layers/", "^bin/"]]
]

/** the path of every module of `layers[index]` and of no lower one */
const pathsOf = (index) => layers[index][1]
const lowerPaths = (index) => layers.slice(0, index).flatMap(([, paths]) => paths)
const higherPaths = (index) => layers.slice(index + 1).flatMap(([, paths]) => paths)

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "an import cycle (type imports count): move the shared declaration to the lower module",
      from: {},
      to: { circular: true }
    },
    {
      name: "layer-unassigned",
      severity: "error",
      comment: "every module of src/ belongs to a layer: add its path to .dependency-cruiser.cjs",
      from: { path: "^src/", pathNot: layers.flatMap(([, paths]) => paths) },
      to: {}
    },
    {
      name: "analytics-knows-no-capability",
      severity: "error",
      comment: "src/analytics/ is what every store builds on: it imports no capability's store (each declares its own service; the shell composes them)",
      from: { path: "^src/analytics/" },
      to: { path: "^src/[^/]+/([a-z]+S|s)tore[.]ts$", pathNot: "^src/analytics/" }
    },
    // one rule per layer: nothing in it (and in no lower layer) imports a module of a higher one
    ...layers.slice(0, -1).map(([name], index) => ({
      name: `layer-${name}`,
      severity: "error",
      comment: `${name} imports only from its own layer and those below it`,
      from: { path: pathsOf(index), pathNot: lowerPaths(index) },
      to: { path: higherPaths(index), pathNot: [...lowerPaths(index), ...pathsOf(index)] }
    }))
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    doNotFollow: { path: "node_modules" },
    exclude: { path: "node_modules" }
  }
}
