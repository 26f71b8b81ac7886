/** Longer queries are refused before any parsing (64 KiB of UTF-16 code units). */
export const MAX_QUERY_LENGTH = 64 * 1024;

/**
 * Deepest nesting of parentheses, `not`, `boost(...)` and function calls. Deeper
 * queries get an `RqlSyntaxError` instead of exhausting the stack.
 */
export const MAX_NESTING_DEPTH = 64;
