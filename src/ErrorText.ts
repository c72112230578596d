/**
 * A failure as one line of text: the error's message, and its cause's when
 * it adds something (undici's `fetch failed` hides the reason there: a
 * refused address, a reset connection, a TLS problem).
 */
export const errorText = (cause: unknown): string => {
  if (cause instanceof Error) {
    const inner = cause.cause instanceof Error && cause.cause.message !== cause.message
      ? ` (${cause.cause.message})`
      : ""
    return `${cause.message}${inner}`
  }
  return String(cause)
}
