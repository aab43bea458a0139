/**
 * One process at a time on an embedded database's folder: `<folder>/gateway.lock`, held with
 * an exclusive lock of the operating system (fs-native-extensions: an open file description
 * lock on Linux, `flock` on macOS, `LockFileEx` on Windows). Taking it is one atomic call, and
 * the kernel releases it when its holder dies however it dies (kill -9 included): a restart
 * right after a crash is never refused, a zombie or a pid used again by another program never
 * holds a folder, and two processes racing for a free folder cannot both win.
 *
 * The file's text is the holder's pid (then its pid and the port it serves the database on),
 * for the message that refuses a second process and for the one-shot commands that reach the
 * database through the holder; it is not the lock, and a stale text is harmless. The holder
 * removes the file when it stops (while still holding it; a process that opened the old file
 * meanwhile sees it is not the one at the path any more, and starts over).
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"

export const lockFileName = "gateway.lock"

/** what the lock file says about its holder */
export interface LockHolder {
  readonly pid?: number | undefined
  /** the local port it serves the database on, once it does */
  readonly port?: number | undefined
}

export interface FolderLock {
  /** writes the port beside the pid */
  readonly notePort: (port: number) => void
  readonly release: () => void
}

export type Locking =
  | { readonly _tag: "Locked"; readonly lock: FolderLock }
  | { readonly _tag: "Held"; readonly holder: LockHolder }
  | { readonly _tag: "Failed"; readonly message: string }

/** fs-native-extensions, loaded with the first lock (its native part is not bundled: found in node_modules) */
let nativeLock: ((fd: number) => boolean) | undefined
const tryLock = (fd: number): boolean => {
  nativeLock ??= (createRequire(import.meta.url)("fs-native-extensions") as { tryLock: (fd: number) => boolean }).tryLock
  return nativeLock(fd)
}

const parseHolder = (text: string): LockHolder => {
  const [pid, port] = text.trim().split(/\s+/).map((part) => Number.parseInt(part, 10))
  return { pid: Number.isInteger(pid) ? pid : undefined, port: Number.isInteger(port) ? port : undefined }
}

/** what `<folder>/gateway.lock` says, whether or not anyone holds it */
const readHolder = (folder: string): LockHolder => {
  try {
    return parseHolder(fs.readFileSync(path.join(folder, lockFileName), "utf8"))
  } catch {
    return {}
  }
}

/** whether process `pid` exists (signal 0 tests without sending; EPERM: it does, not ours) */
const exists = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const pause = new Int32Array(new SharedArrayBuffer(4))

/**
 * The holder named by the lock file of a folder someone holds. A holder writes its pid just
 * after it takes the lock: a text naming no process that exists may be the last holder's,
 * read in between, so it is read again a few times (for the message only: the lock is the
 * lock).
 */
const holderOf = (folder: string): LockHolder => {
  for (let attempt = 0; attempt < 10; attempt++) {
    const holder = readHolder(folder)
    if (holder.pid !== undefined && exists(holder.pid)) return holder
    Atomics.wait(pause, 0, 0, 20)
  }
  return readHolder(folder)
}

const sameFile = (a: fs.Stats, b: fs.Stats | undefined) => b !== undefined && a.ino === b.ino && a.dev === b.dev

const rewrite = (fd: number, text: string) => {
  fs.ftruncateSync(fd, 0)
  fs.writeSync(fd, text, 0)
}

/** takes `<folder>/gateway.lock` for this process, or says who holds it */
export const lockFolder = (folder: string): Locking => {
  const file = path.join(folder, lockFileName)
  // a few tries: each one lost means the holder removed the file in between (it stopped)
  for (let attempt = 0; attempt < 5; attempt++) {
    let fd: number
    try {
      fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o644)
    } catch (error) {
      return { _tag: "Failed", message: `cannot open ${file}: ${(error as Error).message}` }
    }
    let locked: boolean
    try {
      locked = tryLock(fd)
    } catch (error) {
      fs.closeSync(fd)
      return { _tag: "Failed", message: `cannot lock ${file}: ${(error as Error).message}` }
    }
    if (!locked) {
      fs.closeSync(fd)
      return { _tag: "Held", holder: holderOf(folder) }
    }
    if (!sameFile(fs.fstatSync(fd), fs.statSync(file, { throwIfNoEntry: false }))) {
      // the file this lock is on was removed by its holder as it stopped: take the one at the path
      fs.closeSync(fd)
      continue
    }
    rewrite(fd, `${process.pid}\n`)
    return {
      _tag: "Locked",
      lock: {
        notePort: (port) => rewrite(fd, `${process.pid} ${port}\n`),
        // removed while held, then closed: the lock goes with the last descriptor
        release: () => {
          fs.rmSync(file, { force: true })
          fs.closeSync(fd)
        }
      }
    }
  }
  return { _tag: "Failed", message: `cannot take the lock ${file}: it was replaced again and again` }
}
