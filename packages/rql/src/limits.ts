/** Longer queries are refused before any parsing (64 KiB of UTF-16 code units). */
export const MAX_QUERY_LENGTH = 64 * 1024;

/**
 * Deepest nesting of parentheses, `not`, `boost(...)` and function calls. Deeper
 * queries get an `RqlSyntaxError` instead of exhausting the stack.
 */
export const MAX_NESTING_DEPTH = 64;

/**
 * Most values one `in (…)` / `all in (…)` list may hold once its `$parameters` are expanded (each parameter
 * holds at most 10,000, and a list may name several). The list is read by SQLite through one JSON
 * parameter, so this guards the memory and time of one query, not a SQL limit.
 */
export const MAX_IN_VALUES = 65_536;
