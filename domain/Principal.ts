/** Who is calling: the organization and workspace of the API key. */
export interface Principal {
  readonly keyId: string
  readonly organizationId: string
  readonly workspaceId: string
}
