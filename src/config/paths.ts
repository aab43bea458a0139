/**
 * Path arithmetic for the files a configuration names, without `node:path` or the process:
 * the core only joins text. Paths are POSIX (`/`), as the gateway runs on Linux. A path
 * resolved against no folder stays relative, and the shell that reads it resolves it
 * against its working directory.
 */

/** `/a/b/../c/./d` -> `/a/c/d`; a relative path keeps its leading `..` */
const normalize = (path: string): string => {
  const absolute = path.startsWith("/")
  const segments: Array<string> = []
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue
    if (segment === ".." && segments.length > 0 && segments[segments.length - 1] !== "..") segments.pop()
    else if (segment !== ".." || !absolute) segments.push(segment)
  }
  const joined = segments.join("/")
  return absolute ? `/${joined}` : joined === "" ? "." : joined
}

/** the folder of a file: `/cfg/gateway.toml` -> `/cfg` */
export const folderOf = (file: string): string => {
  const slash = file.lastIndexOf("/")
  return slash < 0 ? "." : slash === 0 ? "/" : file.slice(0, slash)
}

/** `relative` resolved against `folder` (absolute paths are kept), as `path.resolve` would */
export const resolvePath = (folder: string | undefined, relative: string): string =>
  normalize(relative.startsWith("/") || folder === undefined ? relative : `${folder}/${relative}`)

/** whether `path` is `folder` or below it (both normalized, absolute or both relative) */
export const isWithin = (path: string, folder: string): boolean =>
  path === folder || path.startsWith(folder === "/" ? "/" : `${folder}/`)

/**
 * Why `name`, as a template's `{% include %}` (or import, extends) names a file, is refused, or
 * undefined: it must be a path below the folder includes resolve against, which is what
 * MiniJinja's path loader (and so TensorZero) accepts: no absolute path, no segment starting with
 * "." (`..` climbs out of the folder; hidden files stay hidden), no backslash.
 */
export const includedNameProblem = (name: string): string | undefined => {
  if (name.startsWith("/")) return "an absolute path is refused"
  if (name.includes("\\")) return "a backslash is refused"
  if (name.split("/").some((segment) => segment.startsWith("."))) return `a path segment starting with "." (such as "..") is refused`
  return undefined
}
