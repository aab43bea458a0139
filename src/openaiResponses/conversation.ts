/**
 * A stored response as conversation (issue 37, design 4): what `previous_response_id` puts
 * before the new input (the earlier input as stored, then one assistant message of the earlier
 * output), and the items `GET /openai/v1/responses/{id}/input_items` lists.
 */
import type { InputBlock, InputMessage } from "../api/inference.ts"
import type { FunctionOutput } from "../inference/variants/answer.ts"
import { idStem } from "./items.ts"
import type { ResponseRecord } from "./stored.ts"

/** an output block as the input block that says it again; tool calls keep their ids, raw names and raw arguments */
const inputBlockOf = (block: Exclude<FunctionOutput, { readonly raw: string }>[number]): InputBlock => {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text }
    case "tool_call":
      return { type: "tool_call", id: block.id, name: block.raw_name, arguments: block.raw_arguments }
    case "thought":
      return {
        type: "thought",
        text: block.text,
        ...(block.signature === undefined ? {} : { signature: block.signature }),
        ...(block.provider_type === undefined ? {} : { provider_type: block.provider_type })
      }
    case "unknown":
      return { type: "unknown", data: block.data, model_provider_name: block.model_provider_name }
  }
}

/**
 * The messages a response continues from: its input's (its `instructions` and system text are
 * not carried, as OpenAI's are not) and its output as one assistant message.
 */
export const previousMessages = (record: ResponseRecord): ReadonlyArray<InputMessage> => {
  const said: ReadonlyArray<InputBlock> = Array.isArray(record.output)
    ? record.output.map(inputBlockOf)
    : [{ type: "text", text: (record.output as { readonly raw: string }).raw }]
  const earlier = record.input.messages ?? []
  return said.length === 0 ? earlier : [...earlier, { role: "assistant", content: said }]
}

export type InputListItem = Readonly<Record<string, unknown>> & { readonly id: string }

/** a file block as the content part that sent it */
const filePart = (block: Extract<InputBlock, { type: "file" }>): Record<string, unknown> => {
  if (block.file_type === "url") {
    return block.mime_type === undefined || block.mime_type.startsWith("image/")
      ? { type: "input_image", image_url: block.url, detail: block.detail ?? "auto" }
      : { type: "input_file", file_url: block.url }
  }
  if (block.file_type === "base64") {
    const url = `data:${block.mime_type};base64,${block.data}`
    return block.mime_type.startsWith("image/") ? { type: "input_image", image_url: url, detail: block.detail ?? "auto" } : { type: "input_file", file_data: url }
  }
  // kept in object storage: where it came from, not read back
  return { type: "input_file", file_url: block.source_url ?? null, filename: block.storage_path.path }
}

/**
 * The input as Responses items, oldest first: a message for each run of a message's text and
 * files, a `function_call` for each tool call, a `function_call_output` for each result, a
 * `reasoning` item for each thought. Ids: `<kind>_<hex id>_in<position>`.
 */
export const inputListItems = (record: ResponseRecord): ReadonlyArray<InputListItem> => {
  const stem = idStem(record.id)
  const items: Array<InputListItem> = []
  const id = (prefix: string) => `${prefix}_${stem}_in${items.length}`
  const system = record.input.system
  if (typeof system === "string" && system !== "") {
    items.push({ id: id("msg"), type: "message", role: "system", status: "completed", content: [{ type: "input_text", text: system }] })
  }
  for (const message of record.input.messages ?? []) {
    const textType = message.role === "user" ? "input_text" : "output_text"
    const blocks: ReadonlyArray<InputBlock> = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content
    let parts: Array<Record<string, unknown>> = []
    const endMessage = () => {
      if (parts.length > 0) items.push({ id: id("msg"), type: "message", role: message.role, status: "completed", content: parts })
      parts = []
    }
    for (const block of blocks) {
      if (block.type === "text") parts.push({ type: textType, text: block.text ?? "" })
      else if (block.type === "raw_text") parts.push({ type: textType, text: block.value })
      else if (block.type === "file") parts.push(filePart(block))
      else {
        endMessage()
        if (block.type === "tool_call") {
          const args = block.raw_arguments ?? (typeof block.arguments === "string" ? block.arguments : JSON.stringify(block.arguments ?? {}))
          items.push({ id: id("fc"), type: "function_call", call_id: block.id, name: block.raw_name ?? block.name ?? "", arguments: args, status: "completed" })
        } else if (block.type === "tool_result") {
          items.push({ id: id("fco"), type: "function_call_output", call_id: block.id, output: block.result, status: "completed" })
        } else if (block.type === "thought") {
          items.push({ id: id("rs"), type: "reasoning", summary: block.text ? [{ type: "summary_text", text: block.text }] : [] })
        }
      }
    }
    endMessage()
  }
  return items
}
