/**
 * Lines of a body read as it arrives (a batch's JSON Lines result file): bytes in, whole lines
 * out, never the whole body held. A line ends at LF (a CR before it is dropped); the last one
 * may end the body instead. A line longer than the cutter's bound comes out as `undefined`, its
 * bytes dropped as they arrive rather than held. A line is decoded as UTF-8 once whole: an LF
 * byte is never part of a multi-byte character, so a line cut across reads decodes as one.
 */

const LF = 10
const CR = 13
const byteOrderMark = "\ufeff"

export interface LineCutter {
  /** pushes the lines `bytes` completes onto `out` */
  readonly feed: (bytes: Uint8Array, out: Array<string | undefined>) => void
  /** pushes the last line, if the body did not end with a line break */
  readonly end: (out: Array<string | undefined>) => void
}

export const lineCutter = (maxLineBytes: number): LineCutter => {
  // a mark is dropped below, before the first line only (the decoder would drop one before every line)
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true })
  /** the bytes of the line being read, from earlier reads */
  let held: Array<Uint8Array> = []
  let heldBytes = 0
  /** the line being read is past the bound: its bytes are dropped until it ends */
  let skipping = false
  let first = true

  const text = (bytes: Uint8Array): string => {
    const end = bytes.length > 0 && bytes[bytes.length - 1] === CR ? bytes.length - 1 : bytes.length
    let line = decoder.decode(bytes.subarray(0, end))
    if (first) {
      first = false
      // a UTF-8 byte order mark is not part of the text (as the transport's whole bodies)
      if (line.startsWith(byteOrderMark)) line = line.slice(1)
    }
    return line
  }

  /** the line that ends with `tail` (the bytes of this read up to the line break) */
  const complete = (tail: Uint8Array, out: Array<string | undefined>) => {
    if (skipping || heldBytes + tail.length > maxLineBytes) {
      out.push(undefined)
      first = false
    } else if (held.length === 0) {
      out.push(text(tail))
    } else {
      held.push(tail)
      const whole = new Uint8Array(heldBytes + tail.length)
      let at = 0
      for (const part of held) {
        whole.set(part, at)
        at += part.length
      }
      out.push(text(whole))
    }
    held = []
    heldBytes = 0
    skipping = false
  }

  return {
    feed: (bytes, out) => {
      let start = 0
      for (let lf = bytes.indexOf(LF); lf !== -1; lf = bytes.indexOf(LF, start)) {
        complete(bytes.subarray(start, lf), out)
        start = lf + 1
      }
      if (start === bytes.length || skipping) return
      const rest = bytes.subarray(start)
      if (heldBytes + rest.length > maxLineBytes) {
        skipping = true
        held = []
        heldBytes = 0
      } else {
        // a copy: the transport may reuse the read's buffer
        held.push(rest.slice())
        heldBytes += rest.length
      }
    },
    end: (out) => {
      if (skipping || heldBytes > 0) complete(new Uint8Array(0), out)
    }
  }
}
