/**
 * Texts held as UTF-8, back to back in blocks of 1 MiB or more: what an import keeps of each
 * checked datapoint until its last line is checked. One allocation per MiB rather than one per
 * datapoint: tens of thousands of small buffers, freed together at the end of an import, leave
 * the allocator's heap fragmented (the process's resident memory stays up by about what the
 * imports held), where a few large blocks go back whole.
 */
const blockBytes = 1024 * 1024

export class HeldTexts {
  private readonly blocks: Array<Buffer> = []
  /** where each text is: its block, its start in it, its length */
  private readonly at: Array<number> = []
  private used = blockBytes
  /** the bytes of every text held */
  bytes = 0

  get length(): number {
    return this.at.length / 3
  }

  /** holds `text` (its UTF-8); returns its size in bytes */
  push(text: string): number {
    const size = Buffer.byteLength(text)
    if (this.used + size > blockBytes || this.blocks.length === 0) {
      this.blocks.push(Buffer.allocUnsafeSlow(Math.max(blockBytes, size)))
      this.used = 0
    }
    const block = this.blocks.length - 1
    this.blocks[block].write(text, this.used, size, "utf8")
    this.at.push(block, this.used, size)
    this.used += size
    this.bytes += size
    return size
  }

  /** the text at `index` */
  text(index: number): string {
    const block = this.blocks[this.at[index * 3]]
    const start = this.at[index * 3 + 1]
    return block.toString("utf8", start, start + this.at[index * 3 + 2])
  }

  /** the size in bytes of the text at `index` */
  size(index: number): number {
    return this.at[index * 3 + 2]
  }

  clear(): void {
    this.blocks.length = 0
    this.at.length = 0
    this.used = blockBytes
    this.bytes = 0
  }
}
