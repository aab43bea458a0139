/**
 * A reasoning item must go back to the Responses API with its `id` and `encrypted_content`
 * (the API reference's reasoning input item requires `id`). The gateway's thought block has one
 * opaque `signature`, so both travel in it as JSON: `{"id":"rs_...","encrypted_content":"..."}`.
 * A signature in another form (another provider's) is not ours, and such a thought is not sent.
 */
export interface ReasoningReference {
  readonly id: string
  readonly encrypted_content?: string | undefined
}

export const encodeReasoningSignature = (reference: ReasoningReference): string =>
  JSON.stringify(reference.encrypted_content === undefined ? { id: reference.id } : reference)

export const decodeReasoningSignature = (signature: string | undefined): ReasoningReference | undefined => {
  if (signature === undefined || !signature.startsWith("{")) return undefined
  try {
    const parsed = JSON.parse(signature)
    if (typeof parsed?.id !== "string") return undefined
    return typeof parsed.encrypted_content === "string" ? { id: parsed.id, encrypted_content: parsed.encrypted_content } : { id: parsed.id }
  } catch {
    return undefined
  }
}
