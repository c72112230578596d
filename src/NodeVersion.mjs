/**
 * The Node.js version the service needs (package.json `engines`), checked in
 * plain JavaScript so that any Node can run the check (src/start.mjs).
 */

export const minimum = [22, 19]

/** Why `version` (e.g. "20.20.2") cannot run the service, in one line; undefined when it can. */
export const nodeVersionProblem = (version) => {
  const [major, minor] = String(version).split(".").map(Number)
  if (major > minimum[0] || (major === minimum[0] && minor >= minimum[1])) return undefined
  return `Node.js ${version} is too old: install Node.js >= ${
    minimum.join(".")
  } (Node 24 LTS recommended, e.g. \`nvm install 24\`), then run the command again.`
}
