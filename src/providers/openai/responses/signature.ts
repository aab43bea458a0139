/**
 * A reasoning item must go back to the Responses API with its `id` and `encrypted_content`
 * (the API reference's reasoning input item requires `id`). The gateway's thought block has one
 * opaque `signature`, so both travel in it as JSON: `{"id":"rs_...","encrypted_content":"..."}`.
 * A signature in another form (another provider's) is not ours, and such a thought is not sent.
 * With `store: false`, a reasoning item without encrypted content cannot be sent back: it has no signature.
 */
export interface ReasoningReference {
  readonly id: string
  readonly encrypted_content: string
}

export const encodeReasoningSignature = (reference: ReasoningReference): string =>
  JSON.stringify({ id: reference.id, encrypted_content: reference.encrypted_content })

export const decodeReasoningSignature = (signature: string | undefined): ReasoningReference | undefined => {
  if (signature === undefined || !signature.startsWith("{")) return undefined
  try {
    const parsed = JSON.parse(signature)
    return typeof parsed?.id === "string" && typeof parsed.encrypted_content === "string"
      ? { id: parsed.id, encrypted_content: parsed.encrypted_content }
      : undefined
  } catch {
    return undefined
  }
}
