/**
 * Isolation: a resource of another workspace is 403, a missing one 404. A
 * workspace is identified by (organization, workspace): workspace names are
 * only unique within their organization.
 */
import { Effect, Option } from "effect"
import { NotFound, PermissionDenied } from "../domain/Errors.ts"
import type { Principal } from "../domain/Principal.ts"

export const requireOwned = <R extends { readonly organizationId: string; readonly workspaceId: string }>(
  principal: Principal,
  resource: string,
  id: string
) =>
(found: Option.Option<R>): Effect.Effect<R, NotFound | PermissionDenied> =>
  Option.match(found, {
    onNone: () => Effect.fail(NotFound.of(resource, id)),
    onSome: (row) =>
      row.organizationId === principal.organizationId && row.workspaceId === principal.workspaceId
        ? Effect.succeed(row)
        : Effect.fail(
          new PermissionDenied({
            message: `The ${resource.replaceAll("_", " ")} '${id}' belongs to another workspace.`
          })
        )
  })
