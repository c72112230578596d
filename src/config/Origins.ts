/** Settings that name an origin (SVC_TRUSTED_ORIGINS, SVC_PREVIEW_ORIGIN): what one is, read strictly. */

/**
 * The origin `entry` names (`scheme://host[:port]`, lower-cased, default port
 * dropped), when it is an http(s) origin exactly: no path, query, fragment or
 * credentials; undefined otherwise.
 */
export const parseOrigin = (entry: string): string | undefined => {
  const url = URL.canParse(entry) ? new URL(entry) : undefined
  if (url === undefined || (url.protocol !== "https:" && url.protocol !== "http:")) return undefined
  const bare = url.username === "" && url.password === "" && url.pathname === "/" && url.search === "" &&
    url.hash === ""
  return bare && !/[?#@]/.test(entry) ? url.origin : undefined
}
