/**
 * A use case's refusal said in the command line's terms. The use cases name the request fields
 * at fault (`dataset_name or datapoint_ids: give exactly one of them`), as the HTTP routes must;
 * a command that builds the request from its flags says the flags instead
 * (`--dataset-name or --datapoint-ids: ...`).
 */

/** a request field, and what follows it in a field path: an index (`[2]`) or a key (`.exact`) */
const fieldPath = /\b([a-z][a-z0-9]*(?:_[a-z0-9]+)*)(\[\d+\]|\.[A-Za-z0-9_-]+)?/g

/**
 * `message` with every field of `flagOf` (a request field -> its flag, without the dashes)
 * outside double quotes (values the user gave, such as a dataset's name) replaced by its flag:
 * `evaluator_names[1]` by `--evaluator-names`, `cutoffs.exact` by `--cutoffs exact`.
 */
export const namingFlags = (message: string, flagOf: Readonly<Record<string, string>>): string =>
  message
    .split(/("(?:[^"\\]|\\.)*")/)
    .map((part, index) =>
      // odd parts are the quoted ones
      index % 2 === 1 ? part : part.replace(fieldPath, (whole, field: string, suffix: string | undefined) => {
        const flag = Object.hasOwn(flagOf, field) ? flagOf[field] : undefined
        if (flag === undefined) return whole
        return suffix === undefined || suffix.startsWith("[") ? `--${flag}` : `--${flag} ${suffix.slice(1)}`
      }))
    .join("")
