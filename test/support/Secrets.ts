/**
 * Secrets and secret contexts as their tests reach them: the pages they are
 * listed in, the routes that address one by id (what the 404 and 403 tables
 * run over), and the resources that bind a secret (what puts it in use).
 */
import { Page } from "../../domain/Page.ts"
import { Secret } from "../../domain/Secret.ts"
import { SecretContext } from "../../domain/SecretContext.ts"
import * as Collection from "./Collection.ts"
import { resourceRoutes } from "./Refusals.ts"

export const SecretPage = Page(Secret)
export const ContextPage = Page(SecretContext)

/** Every route that addresses a secret by id. */
export const secretRoutes = resourceRoutes(Collection.secrets.path, { name: "renamed" }, [["rotate", { value: "v" }]])
/** Every route that addresses a secret context by id. */
export const contextRoutes = resourceRoutes(Collection.secretContexts.path, { name: "renamed" })

/** A tool server whose bearer is the secret (registration does not contact `url`). */
export const bindToolServer = (name: string, secretId: string, url = "https://93.184.215.14/mcp") =>
  Collection.toolServers.create({ name, transport: "http", url, auth: { type: "bearer", secretId } })

/** An HTTP connection whose bearer is the secret (registration does not fetch its spec). */
export const bindHttpConnection = (name: string, secretId: string) =>
  Collection.httpConnections.create({
    name,
    spec: "https://93.184.215.14/openapi.json",
    baseUrl: "https://93.184.215.14",
    auth: { type: "bearer", secretId }
  })
