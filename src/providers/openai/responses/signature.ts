/**
 * A reasoning item's thought signature is its `encrypted_content`, as TensorZero stores it, so
 * that stored thoughts and clients moving over keep their meaning. It goes back as a reasoning
 * item with its summary and encrypted content and no `id`: with `store: false` the encrypted
 * content is the whole item, and an `id` would send the API looking for an item it never kept.
 *
 * OpenAI's encrypted content is a Fernet token, which begins `gAAAA` (its version byte and the
 * high bytes of its timestamp); a signature of another form (another provider's) is not ours,
 * and such a thought is not sent. Thoughts stored by earlier versions of this gateway carry
 * `{"id":...,"encrypted_content":...}` as JSON: their encrypted content is read from it.
 */

const fernetPrefix = "gAAAA"

/** the encrypted content a thought's signature carries back, or undefined when it is not the Responses API's */
export const encryptedContentOf = (signature: string | undefined): string | undefined => {
  if (signature === undefined) return undefined
  if (signature.startsWith(fernetPrefix)) return signature
  if (!signature.startsWith("{")) return undefined
  try {
    const legacy = JSON.parse(signature)
    return typeof legacy?.encrypted_content === "string" ? legacy.encrypted_content : undefined
  } catch {
    return undefined
  }
}
