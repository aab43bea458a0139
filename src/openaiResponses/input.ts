/**
 * A Responses request's `input` as the gateway's input (issue 37, design 3.1): its items as
 * messages, and the texts of its system and developer messages for the system prompt.
 */
import * as Result from "effect/Result"
import { dataUrlPattern, type Detail, fileOfUrl } from "../api/fileUrls.ts"
import type { InputBlock, InputMessage } from "../api/inference.ts"
import { InvalidRequest } from "../errors.ts"
import type { ContentPart, CreateResponseRequest, InputItem, ToolOutput } from "./api.ts"
import { signatureFromClient } from "../providers/families.ts"
import { responsesSignatures } from "./items.ts"

type Translated<A> = Result.Result<A, InvalidRequest>

const invalid = (message: string): Translated<never> => Result.fail(new InvalidRequest({ message }))

const detailOf = (detail: string | null | undefined): Detail | undefined =>
  detail === "low" || detail === "high" || detail === "auto" ? detail : undefined

const filesApi = "file ids need the Files API, which the gateway does not serve"

/** an `input_image` or `input_file` part as a file; `path` names it in a 400 */
const fileOf = (part: Extract<ContentPart, { type: "input_image" | "input_file" }>, path: () => string): Translated<InputBlock> => {
  if (part.type === "input_image") {
    if (part.image_url !== undefined && part.image_url !== null) return Result.succeed(fileOfUrl(part.image_url, detailOf(part.detail)))
    return invalid(part.file_id ? `${path()}.file_id: ${filesApi}; send image_url` : `${path()}.image_url: missing`)
  }
  if (part.file_data !== undefined && part.file_data !== null) {
    const match = dataUrlPattern.exec(part.file_data)
    if (match !== null) return Result.succeed({ type: "file", file_type: "base64", data: match[2], mime_type: match[1] })
    // OpenAI's SDKs also send bare base64 beside a file name; a PDF's name says what it is
    if (part.filename?.toLowerCase().endsWith(".pdf")) {
      return Result.succeed({ type: "file", file_type: "base64", data: part.file_data, mime_type: "application/pdf" })
    }
    return invalid(`${path()}.file_data: expected a data URL (data:<media type>;base64,...)`)
  }
  if (part.file_url !== undefined && part.file_url !== null) return Result.succeed({ type: "file", file_type: "url", url: part.file_url })
  return invalid(part.file_id ? `${path()}.file_id: ${filesApi}; send file_data or file_url` : `${path()}: missing file_data or file_url`)
}

/** part `j` of item `i` as a block; images and files only in user messages */
const partOf = (part: ContentPart, i: number, j: number, user: boolean): Translated<InputBlock> => {
  switch (part.type) {
    case "input_text":
    case "output_text":
      return Result.succeed({ type: "text", text: part.text })
    case "refusal":
      return Result.succeed({ type: "text", text: part.refusal })
    case "input_image":
    case "input_file":
      return user ? fileOf(part, () => `input[${i}].content[${j}]`) : invalid(`input[${i}].content[${j}]: ${part.type} parts are taken in user messages only`)
  }
}

/** the output of a tool call (item `i`): its text parts joined by lines */
const toolOutputText = (output: ToolOutput, i: number): Translated<string> => {
  if (typeof output === "string") return Result.succeed(output)
  const texts: Array<string> = []
  for (let k = 0; k < output.length; k++) {
    const part = output[k]
    if (part.type !== "input_text") return invalid(`input[${i}].output[${k}]: images and files in a tool's output are not supported yet`)
    texts.push(part.text)
  }
  return Result.succeed(texts.join("\n"))
}

type MutableMessage = { readonly role: "user" | "assistant"; readonly content: Array<InputBlock> }

export interface TranslatedInput {
  readonly system: ReadonlyArray<string>
  readonly messages: ReadonlyArray<InputMessage>
}

/**
 * The conversation: user messages and tool outputs on one side, and on the other what the
 * assistant said, called and thought, each turn's items joined into one assistant message (a
 * Responses transcript lists a turn's reasoning, message and calls as items of their own).
 * System and developer messages join the system prompt, after `instructions`. A tool result
 * is named by its call, among the input's or `called`'s.
 *
 * Plain loops rather than `Result.gen`: a generator per item cost this hot route more than its
 * whole translation otherwise does (about 2 µs each).
 */
export const inputOf = (input: CreateResponseRequest["input"], called?: ReadonlyMap<string, string>): Translated<TranslatedInput> => {
  const system: Array<string> = []
  const messages: Array<MutableMessage> = []
  if (input === undefined) return Result.succeed({ system, messages })
  if (typeof input === "string") return Result.succeed({ system, messages: [{ role: "user", content: [{ type: "text", text: input }] }] })
  // call id -> tool name: the gateway's tool results are named, the Responses API's are not
  // (`called`: the calls of the conversation a stored response continues)
  const toolNames = new Map<string, string>(called)
  for (let i = 0; i < input.length; i++) {
    const item = input[i]
    switch (item.type) {
      case undefined:
      case "message": {
        const refused = addMessage(item, i, system, messages)
        if (refused !== undefined) return Result.fail(refused)
        break
      }
      case "function_call":
      case "custom_tool_call":
        toolNames.set(item.call_id, item.name)
        assistantSays(messages, { type: "tool_call", id: item.call_id, name: item.name, arguments: item.type === "function_call" ? item.arguments : item.input })
        break
      case "function_call_output":
      case "custom_tool_call_output": {
        const result = toolOutputText(item.output, i)
        if (Result.isFailure(result)) return Result.fail(result.failure)
        const block: InputBlock = { type: "tool_result", id: item.call_id, name: toolNames.get(item.call_id) ?? "", result: result.success }
        // the outputs of one turn's calls form one user message
        const previous = messages[messages.length - 1]
        if (previous?.role === "user" && previous.content.every((b): boolean => b.type === "tool_result")) previous.content.push(block)
        else messages.push({ role: "user", content: [block] })
        break
      }
      case "reasoning": {
        const text = (item.summary ?? []).map((part) => part.text).join("\n\n")
        const encrypted = item.encrypted_content ?? undefined
        // a signature another family made comes back wrapped with its maker's type (`signatureForClient`)
        const signed = encrypted === undefined ? undefined : signatureFromClient(encrypted, responsesSignatures)
        if (text !== "" || signed !== undefined) {
          assistantSays(messages, { type: "thought", text, ...(signed === undefined ? {} : { signature: signed.signature, provider_type: signed.providerType }) })
        }
        break
      }
      case "item_reference":
        return invalid(`input[${i}]: item references point into stored responses, which are not served yet; send the item itself`)
    }
  }
  return Result.succeed({ system, messages })
}

/** a block of what the assistant said: on the turn's assistant message, begun when it is not the last */
const assistantSays = (messages: Array<MutableMessage>, block: InputBlock): void => {
  const previous = messages[messages.length - 1]
  if (previous?.role === "assistant") previous.content.push(block)
  else messages.push({ role: "assistant", content: [block] })
}

/** a message item: a user message, the assistant's turn, or text of the system prompt */
const addMessage = (
  item: Extract<InputItem, { role: string }>,
  i: number,
  system: Array<string>,
  messages: Array<MutableMessage>
): InvalidRequest | undefined => {
  if (typeof item.content === "string") {
    if (item.role === "user" || item.role === "assistant") messages.push({ role: item.role, content: [{ type: "text", text: item.content }] })
    else system.push(item.content)
    return undefined
  }
  const blocks: Array<InputBlock> = []
  for (let j = 0; j < item.content.length; j++) {
    const part = item.content[j]
    if ((item.role === "system" || item.role === "developer") && part.type !== "input_text") {
      return new InvalidRequest({ message: `input[${i}].content[${j}]: a ${item.role} message takes input_text parts only` })
    }
    const block = partOf(part, i, j, item.role === "user")
    if (Result.isFailure(block)) return block.failure
    blocks.push(block.success)
  }
  switch (item.role) {
    case "user":
      messages.push({ role: "user", content: blocks })
      break
    case "assistant":
      for (const block of blocks) assistantSays(messages, block)
      break
    case "system":
    case "developer":
      for (const block of blocks) if (block.type === "text") system.push(block.text ?? "")
  }
  return undefined
}

/** the names of the tools a conversation called, by call id: a tool result that answers one is named by it */
export const calledTools = (messages: ReadonlyArray<InputMessage>): Map<string, string> => {
  const names = new Map<string, string>()
  for (const message of messages) {
    if (typeof message.content === "string") continue
    for (const block of message.content) if (block.type === "tool_call" && typeof block.name === "string") names.set(block.id, block.name)
  }
  return names
}
