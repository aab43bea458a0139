/**
 * The gateway configuration of a conformance run (test/integration/provider-conformance.test.ts):
 * the model `conformance` served by the subject's provider table, and the functions the
 * scenarios call.
 */
import type { RunningFake } from "./conformance.ts"

/** a TOML value: strings quoted and escaped as JSON strings are (a subset of TOML's basic strings) */
const tomlValue = (value: string | number | boolean): string => typeof value === "string" ? JSON.stringify(value) : String(value)

const outputSchema = {
  type: "object",
  properties: { answer: { type: "string" } },
  required: ["answer"],
  additionalProperties: false
}

/** the parameters of the conformance tool get_weather: `{city: string}` */
export const weatherParameters = {
  type: "object" as const,
  properties: { city: { type: "string" } },
  required: ["city"],
  additionalProperties: false
}

/** `[models.<model>]`, served by the running fake's provider table (its provider named `p`) */
export const conformanceModelToml = (model: string, fake: RunningFake): string => `
[models.${model}]
routing = ["p"]
[models.${model}.providers.p]
${Object.entries(fake.providerTable).map(([key, value]) => `${key} = ${tomlValue(value)}`).join("\n")}
`

/** config.toml and the files it names, for one subject's running fake */
export const conformanceConfig = (fake: RunningFake): { readonly config: string; readonly files: Record<string, string> } => {
  const config = `${conformanceModelToml("conformance", fake)}

[tools.get_weather]
description = "Get the weather for a city"
parameters = "tools/get_weather.json"

# text, stream, image, thought round trip, error, usage
[functions.chat]
type = "chat"
[functions.chat.variants.v]
type = "chat_completion"
model = "conformance"

# tool_call, parallel_tool_calls
[functions.weather]
type = "chat"
tools = ["get_weather"]
tool_choice = "auto"
[functions.weather.variants.v]
type = "chat_completion"
model = "conformance"

# json_strict, json_tool
[functions.json]
type = "json"
output_schema = "output.json"
[functions.json.variants.strict]
type = "chat_completion"
model = "conformance"
json_mode = "strict"
[functions.json.variants.tool]
type = "chat_completion"
model = "conformance"
json_mode = "tool"
`
  return {
    config,
    files: {
      ...fake.files,
      "tools/get_weather.json": JSON.stringify(weatherParameters),
      "output.json": JSON.stringify(outputSchema)
    }
  }
}
