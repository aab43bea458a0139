/**
 * MiniJinja templates of the variants, compiled once at start-up into one environment.
 * Variant templates live under keys of the form `<function>::<variant>::<name>`; files that
 * templates include or import (when `gateway.template_filesystem_access` is on) live under
 * the name the template uses for them.
 */
import { Environment } from "minijinja-js"

export interface TemplateSource {
  readonly key: string
  readonly source: string
  /** where it came from, for error messages */
  readonly origin: string
}

export const templateKey = (functionName: string, variantName: string, templateName: string): string =>
  `${functionName}::${variantName}::${templateName}`

const firstLine = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).split("\n")[0].trim()

// `{% include "a" %}`, `{% import 'b' as m %}`, `{% from "c" import x %}`, `{% extends "d" %}`
const referenceTag = /\{%-?\s*(?:include|import|from|extends)\b([^%]*)%\}/g
const stringLiteral = /"([^"\\]*)"|'([^'\\]*)'/g

/** The names of other templates a template loads, as far as they are string literals. */
export const templateReferences = (source: string): ReadonlyArray<string> => {
  const names: Array<string> = []
  for (const tag of source.matchAll(referenceTag)) {
    for (const literal of tag[1].matchAll(stringLiteral)) names.push(literal[1] ?? literal[2])
  }
  return names
}

export class TemplateEngine {
  private readonly env: Environment

  private constructor(env: Environment) {
    this.env = env
  }

  /** Compiles every template; a syntax error is reported with the template's origin. */
  static compile(
    sources: ReadonlyArray<TemplateSource>
  ): { readonly engine: TemplateEngine } | { readonly errors: ReadonlyArray<{ readonly origin: string; readonly message: string }> } {
    const env = new Environment()
    env.debug = false
    // a variable missing from the arguments is an error, not an empty string
    env.undefinedBehavior = "strict"
    const errors: Array<{ origin: string; message: string }> = []
    for (const template of sources) {
      try {
        env.addTemplate(template.key, template.source)
      } catch (error) {
        errors.push({ origin: template.origin, message: `template syntax error: ${firstLine(error)}` })
      }
    }
    return errors.length > 0 ? { errors } : { engine: new TemplateEngine(env) }
  }

  render(key: string, context: unknown): { readonly text: string } | { readonly error: string } {
    try {
      return { text: this.env.renderTemplate(key, context ?? {}) }
    } catch (error) {
      return { error: firstLine(error) }
    }
  }
}
