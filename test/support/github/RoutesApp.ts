/** The fake's app routes: installations (app JWT), installation tokens, OAuth, the person's own routes. */
import { type Answer, notFound, type Route } from "./FakeGitHub.ts"
import { type FakeState, type Installation, type Permissions, type Person, secret } from "./FakeState.ts"

const account = (i: Installation) => ({
  login: i.account.login,
  id: i.account.id,
  type: i.account.type,
  node_id: `A_${i.account.id}`
})

export const installationBody = (i: Installation) => ({
  id: i.id,
  account: account(i),
  repository_selection: "selected",
  app_id: 4242,
  app_slug: "svc-test-app",
  target_id: i.account.id,
  target_type: i.account.type,
  permissions: {
    contents: "write",
    issues: "write",
    pull_requests: "write",
    actions: "write",
    checks: "read",
    statuses: "read",
    metadata: "read"
  },
  events: ["installation", "installation_repositories"],
  suspended_at: i.suspended ? "2026-01-01T00:00:00Z" : null
})

export const repoBody = (state: FakeState, fullName: string) => {
  const repo = state.repos.get(fullName.toLowerCase())
  const [owner, name] = fullName.split("/")
  return {
    id: repo?.id ?? 1,
    name,
    full_name: `${owner}/${name}`,
    owner: { login: owner, id: 1, type: "Organization" },
    private: repo?.private ?? true,
    default_branch: "main",
    html_url: `https://github.example/${owner}/${name}`,
    clone_url: `https://github.example/${owner}/${name}.git`
  }
}

const person = (state: FakeState, login: string): Person | undefined => state.people.get(login)

const installation = (state: FakeState, id: string): Installation | undefined => state.installations.get(Number(id))

const mint = (state: FakeState, i: Installation, body: Record<string, unknown>): Answer => {
  const names = Array.isArray(body["repositories"]) ? body["repositories"].map(String) : undefined
  const repositories = names === undefined
    ? i.repositories.map((r) => r.toLowerCase())
    : names.map((n) => i.repositories.find((r) => r.split("/")[1].toLowerCase() === n.toLowerCase())?.toLowerCase())
  if (repositories.some((r) => r === undefined)) {
    return {
      status: 422,
      body: {
        message: "There is at least one repository that does not exist or is not accessible to the parent installation."
      }
    }
  }
  const permissions = (typeof body["permissions"] === "object" && body["permissions"] !== null
    ? body["permissions"]
    : installationBody(i).permissions) as Permissions
  const token = secret("ghs_")
  const granted = repositories.filter((r): r is string => r !== undefined)
  state.tokens.set(token, {
    kind: "installation",
    installationId: i.id,
    repositories: granted,
    permissions,
    expires: Date.now() + 3_600_000
  })
  state.minted.push({ token, installationId: i.id, repositories: granted, permissions })
  return {
    status: 201,
    body: {
      token,
      expires_at: new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, "Z"),
      permissions,
      repository_selection: "selected"
    }
  }
}

export const routes: ReadonlyArray<Route> = [
  {
    method: "GET",
    path: "/app/installations/{installation_id}",
    auth: "jwt",
    handle: (state, req) => {
      const i = installation(state, req.params["installation_id"] ?? "")
      return i === undefined ? notFound : { status: 200, body: installationBody(i) }
    }
  },
  {
    method: "POST",
    path: "/app/installations/{installation_id}/access_tokens",
    auth: "jwt",
    handle: (state, req) => {
      const i = installation(state, req.params["installation_id"] ?? "")
      if (i === undefined) return notFound
      if (i.suspended) return { status: 403, body: { message: "This installation has been suspended" } }
      return mint(state, i, req.body)
    }
  },
  {
    method: "GET",
    path: "/installation/repositories",
    auth: "installation",
    handle: (state, req) => {
      if (req.token?.kind !== "installation") return notFound
      const repositories = req.token.repositories.map((r) => {
        const repo = state.repos.get(r)
        return repoBody(state, repo === undefined ? r : `${repo.owner}/${repo.name}`)
      })
      return { status: 200, body: { total_count: repositories.length, repositories } }
    }
  },
  {
    method: "POST",
    path: "/login/oauth/access_token",
    auth: "none",
    // GitHub answers OAuth failures 200 with an `error`; a code and a refresh token work once.
    handle: (state, req) => {
      const clientOk = req.body["client_id"] === "Iv1.fakeclient" &&
        req.body["client_secret"] === "fake-client-secret-0123456789"
      if (req.body["grant_type"] === "refresh_token") {
        const refresh = String(req.body["refresh_token"] ?? "")
        const login = state.refreshTokens.get(refresh)
        if (login === undefined || !clientOk) {
          return {
            status: 200,
            raw: true,
            body: { error: "bad_refresh_token", error_description: "The refresh token passed is incorrect or expired." }
          }
        }
        state.refreshTokens.delete(refresh)
        return { status: 200, raw: true, body: state.issueUserToken(login) }
      }
      const login = state.codes.get(String(req.body["code"] ?? ""))
      if (login === undefined || !clientOk) {
        return {
          status: 200,
          raw: true,
          body: { error: "bad_verification_code", error_description: "The code passed is incorrect or expired." }
        }
      }
      state.codes.delete(String(req.body["code"]))
      return { status: 200, raw: true, body: state.issueUserToken(login) }
    }
  },
  {
    method: "GET",
    path: "/user/installations",
    auth: "user",
    handle: (state, req) => {
      const p = req.token?.kind === "user" ? person(state, req.token.login) : undefined
      const installations = (p?.installations ?? []).flatMap((id) => {
        const i = state.installations.get(id)
        return i === undefined ? [] : [installationBody(i)]
      })
      return { status: 200, body: { total_count: installations.length, installations } }
    }
  },
  {
    method: "GET",
    path: "/user",
    auth: "user",
    handle: (state, req) => {
      const p = req.token?.kind === "user" ? person(state, req.token.login) : undefined
      return p === undefined ? notFound : { status: 200, body: { login: p.login, id: p.id, type: "User" } }
    }
  }
]
