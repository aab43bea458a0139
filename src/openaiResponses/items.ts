/**
 * The output items of a response (issue 37, design 3.2): a message for each run of text, a
 * function (or custom tool) call for each tool call, a reasoning item for each thought. Item
 * ids are made from the inference id and the index of the item's first block among the
 * answer's blocks (`msg_<hex>_<index>`), so the same answer has the same ids whole, streamed
 * and read back.
 */
import type { FunctionOutputItem, MessageOutputItem, ReasoningOutputItem, ResponseOutputItem } from "../api/openaiResponses.ts"
import type { ChatOutputBlock, JsonOutput } from "../inference/output.ts"
import { isCustomTool } from "../inference/tools.ts"
import type { ToolConfig } from "../inference/types.ts"
import type { FunctionOutput } from "../inference/variants/answer.ts"
import { signatureForClient } from "../providers/families.ts"

export type ItemKind = "message" | "function_call" | "custom_tool_call" | "reasoning"

const prefixes: Readonly<Record<ItemKind, string>> = { message: "msg", function_call: "fc", custom_tool_call: "ctc", reasoning: "rs" }

/** the part of item ids an inference gives them all */
export const idStem = (inferenceId: string): string => inferenceId.replaceAll("-", "")

export const itemId = (kind: ItemKind, stem: string, block: number): string => `${prefixes[kind]}_${stem}_${block}`

export const outputTextPart = (text: string) => ({ type: "output_text" as const, text, annotations: [], logprobs: [] })

export const messageItem = (id: string, texts: ReadonlyArray<string>, status: "in_progress" | "completed"): MessageOutputItem => ({
  id,
  type: "message",
  role: "assistant",
  status,
  content: texts.map(outputTextPart)
})

/** the signature family (src/providers/families.ts) of the Responses API's own reasoning: OpenAI's */
export const responsesSignatures = "openai"

/** a thought; its signature is its `encrypted_content`, given only when `include` asks for it */
export const reasoningItem = (id: string, text: string, signature: string | undefined, encrypted: boolean): ReasoningOutputItem => ({
  id,
  type: "reasoning",
  summary: text === "" ? [] : [{ type: "summary_text", text }],
  ...(encrypted ? { encrypted_content: signature ?? null } : {})
})

export const callItem = (
  id: string,
  callId: string,
  name: string,
  input: string,
  custom: boolean,
  status: "in_progress" | "completed"
): FunctionOutputItem =>
  custom
    ? { id, type: "custom_tool_call", call_id: callId, name, input }
    : { id, type: "function_call", call_id: callId, name, arguments: input, status }

/**
 * The items of an answer, in its blocks' order; consecutive texts make one message. A json
 * function's answer is one message with its JSON text. Blocks of unknown kind (another
 * provider's own) are left out.
 */
export const outputItems = (
  inferenceId: string,
  output: FunctionOutput,
  tools: ToolConfig | undefined,
  encryptedReasoning: boolean
): Array<ResponseOutputItem> => {
  const stem = idStem(inferenceId)
  if (!Array.isArray(output)) return [messageItem(itemId("message", stem, 0), [(output as JsonOutput).raw], "completed")]
  const items: Array<ResponseOutputItem> = []
  let run: { readonly index: number; text: string } | undefined
  const endRun = () => {
    if (run !== undefined) items.push(messageItem(itemId("message", stem, run.index), [run.text], "completed"))
    run = undefined
  }
  output.forEach((block: ChatOutputBlock, index: number) => {
    if (block.type === "text") {
      if (run === undefined) run = { index, text: block.text }
      else run.text += block.text
      return
    }
    endRun()
    if (block.type === "tool_call") {
      const custom = isCustomTool(tools, block.raw_name)
      items.push(callItem(itemId(custom ? "custom_tool_call" : "function_call", stem, index), block.id, block.raw_name, block.raw_arguments, custom, "completed"))
    } else if (block.type === "thought") {
      const signature = block.signature === undefined ? undefined : signatureForClient(block.signature, block.provider_type, responsesSignatures)
      items.push(reasoningItem(itemId("reasoning", stem, index), block.text ?? "", signature, encryptedReasoning))
    }
  })
  endRun()
  return items
}

/** `output_text`: the texts of the messages, joined */
export const outputText = (items: ReadonlyArray<ResponseOutputItem>): string => {
  let text = ""
  for (const item of items) if (item.type === "message") for (const part of item.content) text += part.text
  return text
}
