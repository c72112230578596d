/** Who is calling: the organization and workspace of the API key, and the key's role. */
import type { ApiKeyRole } from "./ApiKey.ts"

export interface Principal {
  readonly keyId: string
  readonly organizationId: string
  readonly workspaceId: string
  /** `admin` keys also manage the organization's keys; absent (the service's own callers) is `member`. */
  readonly role?: ApiKeyRole
}
