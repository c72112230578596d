/**
 * What the console calls things: an agent by its metadata `name`, else the
 * first line of its context; a thread by its metadata `name`, else a preview
 * of its first message; the id only when there is nothing better.
 */

/** @typedef {import("./api.js").Agent} Agent */
/** @typedef {import("./api.js").Thread} Thread */
/** @typedef {import("./api.js").ThreadMessage} ThreadMessage */

/**
 * The first line of `text`, cut to `max` characters.
 * @param {string} text
 * @param {number} [max]
 */
export const firstLine = (text, max = 60) => {
  const line = text.split("\n").find((l) => l.trim() !== "")?.trim() ?? ""
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}

/** @param {Agent} agent */
export const agentName = (agent) => {
  const named = agent.metadata["name"]
  if (named !== undefined && named !== "") return named
  const first = firstLine(agent.context[0]?.content ?? "")
  return first === "" ? agent.id : first
}

/**
 * The text of a message (its text parts).
 * @param {ThreadMessage} message
 */
export const messageText = (message) =>
  message.parts.flatMap((part) => (part.type === "text" && "text" in part ? [part.text] : [])).join("\n")

/**
 * @param {Thread} thread
 * @param {ThreadMessage | undefined} [first] the thread's first message, when read
 */
export const threadName = (thread, first) => {
  const named = thread.metadata["name"]
  if (named !== undefined && named !== "") return named
  const preview = first === undefined ? "" : firstLine(messageText(first))
  return preview === "" ? (first === undefined ? "New thread" : "Thread with files") : preview
}
