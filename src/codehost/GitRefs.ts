/** Branch names as git accepts them (the agent grant's branch prefix and base branches, the workspace git tools). */

/** A branch name git accepts (git check-ref-format, for one branch), and no wildcard. */
export const validBranch = (name: string): boolean =>
  /^[^\s~^:?*[\\\x00-\x1f\x7f]+$/.test(name) && !name.startsWith("-") && !name.startsWith("/") && !name.endsWith("/") &&
  !name.endsWith(".") && !name.endsWith(".lock") && !name.includes("..") && !name.includes("//") &&
  !name.includes("@{") &&
  name !== "@" && !name.split("/").some((part) => part.startsWith("."))
