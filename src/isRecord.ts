/** Whether `value` is a JSON object (not null, not an array): what parsed JSON is read as field by field. */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)
