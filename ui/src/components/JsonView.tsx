/** JSON shown indented and syntax highlighted (highlight.js with its JSON grammar alone). */
import hljs from "highlight.js/lib/core"
import json from "highlight.js/lib/languages/json"
import { useMemo } from "react"

hljs.registerLanguage("json", json)

export const JsonView = (props: { value: unknown; label?: string }) => {
  const html = useMemo(() => {
    const text = typeof props.value === "string" ? prettyIfJson(props.value) : JSON.stringify(props.value, null, 2) ?? "null"
    return hljs.highlight(text, { language: "json" }).value
  }, [props.value])
  // highlight.js escapes the text it wraps in spans
  return (
    <pre className="json" tabIndex={0} aria-label={props.label ?? "JSON"}>
      <code dangerouslySetInnerHTML={{ __html: html }} />
    </pre>
  )
}

/** a string holding JSON (a raw provider request), indented; any other string as it is */
const prettyIfJson = (text: string) => {
  try {
    return JSON.stringify(JSON.parse(text), null, 2)
  } catch {
    return text
  }
}
