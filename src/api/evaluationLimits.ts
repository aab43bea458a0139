/**
 * The limits of evaluation runs, apart from their schemas: the UI imports them as values, and
 * a module of plain constants keeps the schema library out of its bundle.
 */

/** concurrent inferences of one run: default and upper bound */
export const defaultConcurrency = 10
export const maxConcurrency = 100
/** results one read of a run answers at most (and by default) */
export const maxResultsListed = 1000
