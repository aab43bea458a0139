/**
 * The built-in json functions of GEPA prompt optimization: `gateway::optimization::gepa::analyze`
 * (why one output scored as it did, and what in the templates caused it) and
 * `gateway::optimization::gepa::mutate` (the templates rewritten to fix what analyses found).
 * Every configuration has both (`buildConfig` registers them, with their system templates),
 * without variants: an optimization runs them with `gepaModelVariant`, on the model its request
 * names. Here too are their user messages, built in code (as a judge's), and the reading of a
 * mutation. No I/O.
 */
import { bounded, fenced, prettyJson } from "../../promptText.ts"
import type { Input } from "../../api/inference.ts"
import { literalTemplate } from "../../config/templateFiles.ts"
import type { BuiltinFunction, ChatCompletionVariant } from "../../config/types.ts"
import { compileJsonSchema, type JsonSchemaValidator } from "../../jsonSchema.ts"
import { isRecord } from "../../isRecord.ts"

export const gepaAnalyzeFunction = "gateway::optimization::gepa::analyze"
export const gepaMutateFunction = "gateway::optimization::gepa::mutate"
export type GepaBuiltinFunction = typeof gepaAnalyzeFunction | typeof gepaMutateFunction

/** the key of a built-in's system template: reserved, since no configured function's name starts with `gateway::` */
export const gepaSystemTemplateKey = (functionName: GepaBuiltinFunction): string => `${functionName}::system`

export const gepaAnalyzeOutputSchema: Record<string, unknown> = {
  type: "object",
  properties: { analysis: { type: "string" } },
  required: ["analysis"],
  additionalProperties: false
}

/** every object closed and every property required: what OpenAI's strict structured outputs accept */
export const gepaMutateOutputSchema: Record<string, unknown> = {
  type: "object",
  properties: {
    templates: {
      type: "array",
      items: {
        type: "object",
        properties: { name: { type: "string" }, content: { type: "string" } },
        required: ["name", "content"],
        additionalProperties: false
      }
    }
  },
  required: ["templates"],
  additionalProperties: false
}

export const gepaAnalyzeInstructions = `You analyse one result of a language-model function whose prompt is being improved.

The function's prompt is built from MiniJinja templates: each template turns the arguments of a request (described by the JSON Schemas shown, when the function has them) into the text of the system prompt or of a message. The model was called with these templates on one input, and evaluators then scored its output.

You are shown the function, its templates, the argument schemas, the input, the output the model gave (or the error that stopped it), the reference output when there is one, and each evaluator's score.

Write an analysis that helps someone rewrite the templates:
1. Say what the output got right and what it got wrong, judging by the scores and, when there is one, by comparing it with the reference output. An evaluator without a score did not score this output: ignore it, unless its error shows a problem with the output itself.
2. Explain why. Point to the parts of the templates that led the model there (name the template and quote the words briefly): missing, vague or contradictory instructions, a misleading example, the wrong emphasis, an unclear output format, context from the arguments that is left out or badly presented. When the prompt is not to blame (a wrong reference, a transient error), say so.
3. Suggest concrete changes to the templates that would fix it without losing what already works. The changes must help other inputs too: never write this input's expected answer into a template.

When the output scored well, say what in the templates made it work, so that it is kept.

Be specific and brief. Answer with a JSON object {"analysis": "<your analysis>"} and nothing else.`

export const gepaMutateInstructions = `You improve the prompt templates of a language-model function.

You are shown the function, its current MiniJinja templates, the JSON Schemas of their arguments, and analyses of how the model did with these templates on several inputs: each with the evaluators' scores and, when included, the input and the output.

Rewrite the templates so that the model avoids the problems the analyses describe, while keeping what works:
- Fix first the causes that several analyses share. Prefer general instructions to rules that fit one example, and never copy an example's expected answer into a template.
- Keep each template's role: the system template stays the system prompt, a user template stays the user's message.
- Keep every variable the templates use that the schemas provide: each {{ variable }}, and each argument used in {% if %} or {% for %} tags, must still be used. Use no variable that the schemas do not declare: rendering fails on an unknown variable. When the function has no schemas, keep the variables the current templates use and add none.
- Write valid MiniJinja: close every {% ... %} block, and write literal braces only inside {% raw %} blocks or string literals.
- Keep the templates' names: change only the templates listed, and add no new ones.

Answer with only a JSON object {"templates": [{"name": "<template name>", "content": "<the whole new template>"}]}. Give each template you change once, with its complete new text; a template you leave out keeps its current text. Change at least one template.`

const compiled = (schema: Record<string, unknown>): JsonSchemaValidator => {
  const result = compileJsonSchema(schema)
  if ("error" in result) throw new Error(`a GEPA output schema does not compile: ${result.error}`)
  return result.validator
}
const analyzeValidator = compiled(gepaAnalyzeOutputSchema)
const mutateValidator = compiled(gepaMutateOutputSchema)

/** A built-in function and its system template's source (the instructions, rendered as written). */
const builtin = (name: GepaBuiltinFunction, description: string, outputSchema: JsonSchemaValidator, instructions: string): BuiltinFunction => ({
  fn: {
    name,
    type: "json",
    description,
    schemas: new Map(),
    outputSchema,
    tools: [],
    toolChoice: { type: "auto" },
    variants: new Map(),
    evaluators: new Map()
  },
  systemKey: gepaSystemTemplateKey(name),
  systemSource: literalTemplate(instructions)
})

/** The built-ins, new objects each time (one set per configuration). */
export const gepaBuiltins = (): ReadonlyArray<BuiltinFunction> => [
  builtin(gepaAnalyzeFunction, "GEPA: why an output scored as it did", analyzeValidator, gepaAnalyzeInstructions),
  builtin(gepaMutateFunction, "GEPA: prompt templates rewritten from analyses", mutateValidator, gepaMutateInstructions)
]

/** The variant that runs a built-in on `model`: its system template, strict json mode, one retry. */
export const gepaModelVariant = (functionName: GepaBuiltinFunction, model: string, name: string): ChatCompletionVariant => ({
  name,
  type: "chat_completion",
  weight: 0,
  model,
  templates: new Map([["system", gepaSystemTemplateKey(functionName)]]),
  jsonMode: "strict",
  params: {},
  retries: { numRetries: 1, maxDelayS: 5 },
  timeouts: {},
  extraBody: [],
  extraHeaders: []
})

// ---- the user messages

/**
 * Characters of one value (an input, an output, a reference, the schemas) beyond which it is
 * cut, saying how much was left out; an example among a mutation's analyses is cut shorter,
 * since there are many. Templates are cut only past `maxGepaTemplateLength`: the mutator
 * rewrites them whole.
 */
export const maxGepaValueLength = 20_000
export const maxGepaExampleLength = 5_000
export const maxGepaTemplateLength = 100_000


/** a string as it is; anything else as pretty JSON */
const readable = (value: unknown): string => typeof value === "string" ? value : prettyJson(value)


const block = (title: string, value: unknown, max: number): string => `${title}\n${fenced(bounded(readable(value), max))}`

const userMessage = (sections: ReadonlyArray<string>): Input => ({
  messages: [{ role: "user", content: [{ type: "text", text: sections.join("\n\n") }] }]
})

interface FunctionShown {
  readonly functionName: string
  readonly functionType: "chat" | "json"
  /** template name -> MiniJinja source */
  readonly templates: Readonly<Record<string, string>>
  /** schema name -> the JSON Schema of that template's arguments */
  readonly schemas: Readonly<Record<string, unknown>>
}

const functionSections = (shown: FunctionShown): ReadonlyArray<string> => {
  const answers = shown.functionType === "json" ? "answers with a JSON object" : "answers with text (and tool calls, when it has tools)"
  const names = Object.keys(shown.templates)
  const schemaNames = Object.keys(shown.schemas)
  return [
    `## Function\n\`${shown.functionName}\`, a ${shown.functionType} function: it ${answers}.`,
    [
      `## Prompt templates (${names.length}: ${names.map((name) => `"${name}"`).join(", ")})`,
      ...names.map((name) => block(`### Template "${name}"`, shown.templates[name], maxGepaTemplateLength))
    ].join("\n\n"),
    schemaNames.length === 0
      ? "## Argument schemas\nNone: the function declares no schema, so its templates' arguments are not checked."
      : block(`## Argument schemas (template name -> JSON Schema of its arguments)`, shown.schemas, maxGepaValueLength)
  ]
}

const scoreLines = (
  scores: Readonly<Record<string, number | null>>,
  errors: Readonly<Record<string, string>>,
  optimize: Readonly<Record<string, "max" | "min">>
): string => {
  const names = [...new Set([...Object.keys(scores), ...Object.keys(errors)])]
  if (names.length === 0) return "(no evaluator)"
  return names.map((name) => {
    const score = scores[name]
    const direction = optimize[name] === undefined ? "" : optimize[name] === "max" ? " (higher is better)" : " (lower is better)"
    const value = score === undefined || score === null ? "no score" : String(score)
    const error = errors[name] === undefined ? "" : ` (error: ${bounded(errors[name], 1000)})`
    return `- ${name}: ${value}${direction}${error}`
  }).join("\n")
}

export interface AnalyzeArgs extends FunctionShown {
  /** the datapoint's input */
  readonly input: unknown
  /** the output the candidate's variant gave; undefined when it failed (`error`) */
  readonly output: unknown | undefined
  readonly error?: string | undefined
  /** the datapoint's reference output, when it has one */
  readonly reference?: unknown
  /** evaluator name -> score (null: it did not score) */
  readonly scores: Readonly<Record<string, number | null>>
  readonly evaluatorErrors?: Readonly<Record<string, string>> | undefined
  /** evaluator name -> which way is better, when known */
  readonly optimize?: Readonly<Record<string, "max" | "min">> | undefined
}

/** The user message of `gateway::optimization::gepa::analyze`: the function, one result, its scores. */
export const analyzeInput = (args: AnalyzeArgs): Input =>
  userMessage([
    ...functionSections(args),
    block("## Input", args.input, maxGepaValueLength),
    args.output === undefined
      ? block("## Output\nNone: the inference failed with this error", args.error ?? "(no error given)", maxGepaValueLength)
      : block("## Output", args.output, maxGepaValueLength),
    ...(args.reference === undefined || args.reference === null ? [] : [block("## Reference output", args.reference, maxGepaValueLength)]),
    `## Scores\n${scoreLines(args.scores, args.evaluatorErrors ?? {}, args.optimize ?? {})}`,
    "Explain why the output scored as it did and what in the templates caused it."
  ])

export interface MutateArgs extends FunctionShown {
  /** the analyses of the results of these templates; input and output absent when the caller leaves them out */
  readonly analyses: ReadonlyArray<{
    readonly analysis: string
    readonly input?: unknown
    readonly output?: unknown
    readonly scores: Readonly<Record<string, number | null>>
  }>
  readonly optimize?: Readonly<Record<string, "max" | "min">> | undefined
}

/** The user message of `gateway::optimization::gepa::mutate`: the function, its templates, the analyses. */
export const mutateInput = (args: MutateArgs): Input =>
  userMessage([
    ...functionSections(args),
    [
      `## Analyses (${args.analyses.length})`,
      ...args.analyses.map((item, i) =>
        [
          `### Result ${i + 1}`,
          `Scores:\n${scoreLines(item.scores, {}, args.optimize ?? {})}`,
          ...(item.input === undefined ? [] : [block("Input:", item.input, maxGepaExampleLength)]),
          ...(item.output === undefined ? [] : [block("Output:", item.output, maxGepaExampleLength)]),
          block("Analysis:", item.analysis, maxGepaValueLength)
        ].join("\n\n")
      )
    ].join("\n\n"),
    `Rewrite the templates to fix the problems these analyses describe. Template names: ${
      Object.keys(args.templates).map((name) => `"${name}"`).join(", ")
    }.`
  ])

// ---- the mutation

const quotedName = (name: string): string => JSON.stringify(name.length > 100 ? `${name.slice(0, 100)}...` : name)

/**
 * The mutator's answer (its parsed JSON) -> the child's templates: the parent's, with those it
 * gives replaced. A name the parent does not have, a name given twice, empty content, or no
 * change at all is a problem.
 */
export const parseMutation = (
  parsed: unknown,
  parentTemplates: Readonly<Record<string, string>>
): { readonly templates: Record<string, string> } | { readonly problem: string } => {
  if (!isRecord(parsed) || !Array.isArray(parsed.templates)) return { problem: "the answer is not an object with a list of templates" }
  const templates: Record<string, string> = { ...parentTemplates }
  const given = new Set<string>()
  for (const [i, item] of parsed.templates.entries()) {
    if (!isRecord(item) || typeof item.name !== "string" || typeof item.content !== "string") {
      return { problem: `templates[${i}] is not an object with a string name and a string content` }
    }
    if (!Object.hasOwn(parentTemplates, item.name)) {
      const names = Object.keys(parentTemplates).map((name) => `"${name}"`).join(", ")
      return { problem: `template ${quotedName(item.name)} is not one of the templates (${names})` }
    }
    if (given.has(item.name)) return { problem: `template ${quotedName(item.name)} is given twice` }
    if (item.content.trim() === "") return { problem: `template ${quotedName(item.name)} is empty` }
    given.add(item.name)
    templates[item.name] = item.content
  }
  if (Object.keys(parentTemplates).every((name) => templates[name] === parentTemplates[name])) {
    return { problem: "no change: the templates are the parent's" }
  }
  return { templates }
}
