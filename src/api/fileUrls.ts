/**
 * Files that OpenAI-style requests give by URL (the chat route's `image_url` and `file` parts,
 * the Responses API's `input_image` and `input_file`): a data URL's bytes go inline, any other
 * URL as it is (the provider, or the gateway for providers that take bytes only, fetches it).
 */
import type { InputBlock } from "./inference.ts"

export type Detail = "low" | "high" | "auto"

/** `data:<media type>[;...];base64,<data>`: [, media type, data] */
export const dataUrlPattern = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s

/** the file block of `url`, with the image `detail` when given */
export const fileOfUrl = (url: string, detail: Detail | undefined): InputBlock => {
  const match = dataUrlPattern.exec(url)
  return match !== null
    ? { type: "file", file_type: "base64", data: match[2], mime_type: match[1], detail }
    : { type: "file", file_type: "url", url, detail }
}
