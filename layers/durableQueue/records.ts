/**
 * The records of the write queue's durable log (layers/durableQueue/log.ts), as bytes.
 *
 * A record: its payload's length (u32 LE), a CRC-32 of its kind and payload (u32 LE), its kind
 * (u8), then the payload. Two kinds:
 * - a unit: its sequence number (u48 LE), its row count (u32 LE), then each row as its table
 *   (u16 LE length, latin1) and its encoded text (u32 LE length, the bytes the database takes);
 * - written: every unit up to a sequence number (u48 LE) is done with (stored, or dropped for
 *   its own rows): the write queue flushes in the order units came, so one number says it.
 *
 * Reading stops at the first record that is short or whose checksum is wrong: a write cut by a
 * kill (a torn tail), or damage; nothing after it in that file is trusted.
 */
import { Buffer } from "node:buffer"
import { crc32 } from "node:zlib"
import type { EncodedRow } from "../../src/analytics/database.ts"

const headerBytes = 9
const unitKind = 1
const writtenKind = 2

/** the largest sequence number a record holds (u48): far beyond any process's units */
const maxSequence = 2 ** 48 - 1

const sealed = (record: Buffer): Buffer => {
  record.writeUInt32LE(record.length - headerBytes, 0)
  record.writeUInt32LE(crc32(record.subarray(8)), 4)
  return record
}

/** the record of a unit of rows */
export const unitRecord = (sequence: number, rows: ReadonlyArray<EncodedRow>): Buffer => {
  let length = headerBytes + 6 + 4
  for (const row of rows) length += 2 + row.table.length + 4 + row.text.length
  const record = Buffer.allocUnsafe(length)
  record[8] = unitKind
  record.writeUIntLE(sequence, 9, 6)
  record.writeUInt32LE(rows.length, 15)
  let offset = 19
  for (const row of rows) {
    offset = record.writeUInt16LE(row.table.length, offset)
    offset += record.write(row.table, offset, "latin1")
    offset = record.writeUInt32LE(row.text.length, offset)
    offset += row.text.copy(record, offset)
  }
  return sealed(record)
}

/** the record saying every unit up to `sequence` is done with */
export const writtenRecord = (sequence: number): Buffer => {
  const record = Buffer.allocUnsafe(headerBytes + 6)
  record[8] = writtenKind
  record.writeUIntLE(Math.min(sequence, maxSequence), 9, 6)
  return sealed(record)
}

export interface LoggedUnit {
  readonly sequence: number
  readonly rows: ReadonlyArray<EncodedRow>
}

/** what one file of a log holds */
export interface LogContents {
  readonly units: Array<LoggedUnit>
  /** every unit up to this number is done with (0: none said) */
  readonly writtenUpTo: number
  /** bytes past the last whole record: a torn tail or damage, ignored */
  readonly ignoredBytes: number
}

const unitOf = (payload: Buffer): LoggedUnit | undefined => {
  if (payload.length < 10) return undefined
  const sequence = payload.readUIntLE(0, 6)
  const count = payload.readUInt32LE(6)
  const rows: Array<EncodedRow> = []
  let offset = 10
  for (let index = 0; index < count; index++) {
    if (offset + 2 > payload.length) return undefined
    const tableLength = payload.readUInt16LE(offset)
    offset += 2
    if (offset + tableLength + 4 > payload.length) return undefined
    const table = payload.toString("latin1", offset, offset + tableLength)
    offset += tableLength
    const textLength = payload.readUInt32LE(offset)
    offset += 4
    if (offset + textLength > payload.length) return undefined
    // a copy: the file's buffer can go once it is read
    rows.push({ table, text: Buffer.from(payload.subarray(offset, offset + textLength)) })
    offset += textLength
  }
  return offset === payload.length ? { sequence, rows } : undefined
}

/** the records of one file, up to the first that is torn or damaged */
export const readRecords = (file: Buffer): LogContents => {
  const units: Array<LoggedUnit> = []
  let writtenUpTo = 0
  let offset = 0
  while (offset + headerBytes <= file.length) {
    const length = file.readUInt32LE(offset)
    const end = offset + headerBytes + length
    if (end > file.length || file.readUInt32LE(offset + 4) !== crc32(file.subarray(offset + 8, end))) break
    const kind = file[offset + 8]
    const payload = file.subarray(offset + headerBytes, end)
    if (kind === unitKind) {
      const unit = unitOf(payload)
      if (unit === undefined) break
      units.push(unit)
    } else if (kind === writtenKind && payload.length === 6) {
      writtenUpTo = Math.max(writtenUpTo, payload.readUIntLE(0, 6))
    } else {
      break
    }
    offset = end
  }
  return { units, writtenUpTo, ignoredBytes: file.length - offset }
}
