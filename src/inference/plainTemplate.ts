/**
 * Templates that only substitute variables (`You are {{ name }}, on {{ topic.title }}.`), which
 * most prompts are, rendered in JavaScript: a call into the WebAssembly engine costs more than
 * the whole substitution. This is only a shortcut that must never change a result: a template is
 * plain only when MiniJinja would read it as text and `{{ path }}` expressions, and `renderPlain`
 * answers undefined whenever its text might differ from MiniJinja's (a variable missing, a
 * value that is not a string), so that the engine renders those, with its own formatting and
 * errors (src/inference/templates.ts). test/unit/templates-plain.test.ts renders every template
 * of the test configurations both ways.
 */

/** the pieces of a plain template: text as it is, and the variable paths between (`a.b` → ["a", "b"]) */
export type PlainTemplate = ReadonlyArray<string | ReadonlyArray<string>>

// an expression that is only a variable or an attribute path; anything else (`-` trims, filters,
// literals, calls, indexing) is left to the engine
const expression = /\{\{[ \t\r\n]*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)[ \t\r\n]*\}\}/y

// words that are literals or operators in an expression, not variables
const keywords = new Set(["true", "false", "none", "True", "False", "None", "and", "or", "not", "in", "is", "if", "else"])

/**
 * Templates whose name makes MiniJinja escape what they print (its default: HTML for
 * `.html`/`.htm`/`.xml`, JSON for `.json`/`.json5`/`.js`/`.yaml`/`.yml`, also before a `.j2`/
 * `.jinja`/`.jinja2` suffix) are never plain.
 */
const escapedName = /\.(html?|xml|json5?|js|ya?ml)(\.(j2|jinja2?))?$/i

/** `source` as a plain template, or undefined when it is anything more (or its name makes the engine escape) */
export const plainTemplate = (name: string, source: string): PlainTemplate | undefined => {
  if (escapedName.test(name)) return undefined
  // MiniJinja drops one newline at the end of a template (`keep_trailing_newline` is off)
  const text = source.endsWith("\r\n") ? source.slice(0, -2) : source.endsWith("\n") ? source.slice(0, -1) : source
  const pieces: Array<string | ReadonlyArray<string>> = []
  // where the text not yet taken begins, and where to look for the next brace
  let textStart = 0
  let at = 0
  for (;;) {
    const open = text.indexOf("{", at)
    if (open < 0 || open === text.length - 1) break
    const next = text[open + 1]
    if (next === "%" || next === "#") return undefined
    if (next !== "{") {
      // a lone brace is text
      at = open + 1
      continue
    }
    expression.lastIndex = open
    const match = expression.exec(text)
    if (match === null) return undefined
    const path = match[1]!.split(".")
    if (keywords.has(path[0]!)) return undefined
    if (open > textStart) pieces.push(text.slice(textStart, open))
    pieces.push(path)
    textStart = at = expression.lastIndex
  }
  if (textStart < text.length) pieces.push(text.slice(textStart))
  return pieces
}

/**
 * The text of `template` with `context`'s values, or undefined when a variable is missing or
 * not a string (the engine then renders it: its formatting of numbers, its errors).
 */
export const renderPlain = (template: PlainTemplate, context: unknown): string | undefined => {
  let text = ""
  for (const piece of template) {
    if (typeof piece === "string") {
      text += piece
      continue
    }
    let value: unknown = context
    for (const name of piece) {
      if (typeof value !== "object" || value === null || Array.isArray(value) || !Object.hasOwn(value, name)) return undefined
      value = (value as Record<string, unknown>)[name]
    }
    if (typeof value !== "string") return undefined
    text += value
  }
  return text
}
