/**
 * The state of the fake GitHub: the app's installations, people and their
 * tokens, repositories (each a real bare git repository, so contents,
 * branches, commits and pushes are git's own) with their issues, pull
 * requests, reviews, workflows and checks, and gists.
 */
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export type Level = "read" | "write"
export type Permissions = Record<string, Level>

export interface Comment {
  id: number
  body: string
  user: string
  created_at: string
}
export interface Issue {
  number: number
  title: string
  body: string
  state: "open" | "closed"
  state_reason?: "completed" | "not_planned"
  labels: Array<string>
  comments: Array<Comment>
  user: string
}
export interface Review {
  id: number
  body: string
  event: string
  commit_id: string
  user: string
}
export interface Thread {
  id: string
  path: string
  line: number
  body: string
  resolved: boolean
}
export interface Pull {
  number: number
  title: string
  body: string
  state: "open" | "closed"
  head: string
  base: string
  merged: boolean
  merge_sha: string | null
  reviews: Array<Review>
  threads: Array<Thread>
  /** Its conversation (a pull request is an issue too). */
  comments: Array<Comment>
  user: string
  /** The fork the head branch lives in (`owner/name`), when it is not this repository. */
  headRepo?: string
}
export interface WorkflowRun {
  id: number
  workflow_id: number
  status: string
  conclusion: string | null
  head_branch: string
  head_sha: string
  name: string
}
/** A check run reported on a commit (the Checks API). */
export interface CheckRun {
  sha: string
  name: string
  status: "queued" | "in_progress" | "completed"
  conclusion: "success" | "failure" | "neutral" | "cancelled" | "skipped" | "timed_out" | "action_required" | null
  summary: string
}
/** A commit status (the older Statuses API; branch protection counts both). */
export interface CommitStatus {
  sha: string
  context: string
  state: "error" | "failure" | "pending" | "success"
}
export interface Repo {
  id: number
  owner: string
  name: string
  private: boolean
  /** The bare repository. */
  dir: string
  issues: Array<Issue>
  pulls: Array<Pull>
  labels: Array<string>
  workflows: Array<{ id: number; name: string; path: string }>
  runs: Array<WorkflowRun>
  dispatches: Array<{ workflow_id: number; ref: string; inputs: Record<string, unknown> }>
  checks: Array<CheckRun>
  statuses: Array<CommitStatus>
  /** The repository it was forked from (`owner/name`). */
  parent?: string
}
export interface Installation {
  id: number
  account: { login: string; id: number; type: "User" | "Organization" }
  repositories: Array<string>
  suspended: boolean
}
export interface Person {
  id: number
  login: string
  installations: Array<number>
}
export type Token =
  | {
    kind: "installation"
    installationId: number
    repositories: Array<string>
    permissions: Permissions
    expires: number
  }
  /** `expired`: set by a test (GitHub's clock is the real one, the service's may be TestClock). */
  | { kind: "user"; login: string; expired: boolean }

/** An OAuth answer of `/login/oauth/access_token` (expiring user tokens, as GitHub Apps issue them). */
export interface UserTokenAnswer {
  readonly access_token: string
  readonly token_type: "bearer"
  readonly scope: ""
  readonly expires_in: number
  readonly refresh_token: string
  readonly refresh_token_expires_in: number
}
export interface Gist {
  id: string
  owner: string
  description: string
  public: boolean
  files: Record<string, string>
  comments: Array<Comment>
}

export const gitRun = (cwd: string, ...args: ReadonlyArray<string>): string =>
  execFileSync("git", [
    "-c",
    "user.name=Octo Cat",
    "-c",
    "user.email=octo@example.com",
    "-c",
    "init.defaultBranch=main",
    ...args
  ], {
    cwd,
    encoding: "utf8",
    // A failed lookup is an answer (404), not noise on the test's output.
    stdio: ["ignore", "pipe", "pipe"]
  }).trim()

/** A token in GitHub's format: its prefix and 36 letters and digits. */
export const secret = (prefix: string): string =>
  `${prefix}${randomBytes(36).toString("base64").replace(/[^A-Za-z0-9]/g, "").slice(0, 36).padEnd(36, "0")}`

export class FakeState {
  readonly root = mkdtempSync(join(tmpdir(), "svc-fake-github-"))
  readonly installations = new Map<number, Installation>()
  readonly people = new Map<string, Person>()
  readonly codes = new Map<string, string>()
  readonly tokens = new Map<string, Token>()
  readonly repos = new Map<string, Repo>()
  readonly gists = new Map<string, Gist>()
  /** Unused refresh tokens and whose they are (single use, as on GitHub). */
  readonly refreshTokens = new Map<string, string>()
  /** Every user token and refresh token issued (a test greps for them). */
  readonly userTokens: Array<string> = []
  /** Every installation token minted, with what it was narrowed to (tests assert narrowing). */
  readonly minted: Array<
    { token: string; installationId: number; repositories: Array<string>; permissions: Permissions }
  > = []
  private next = 1000

  id(): number {
    return this.next++
  }

  /** A repository with files on `main` (one commit), served over git too. */
  addRepo(
    fullName: string,
    files: Record<string, string> = { "README.md": "# hello\n" },
    options: { private?: boolean } = {}
  ): Repo {
    const [owner, name] = fullName.split("/")
    const dir = join(this.root, "git", owner, `${name}.git`)
    mkdirSync(dir, { recursive: true })
    gitRun(dir, "init", "-q", "--bare")
    const scratch = mkdtempSync(join(this.root, "scratch-"))
    gitRun(scratch, "init", "-q")
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(join(scratch, path, ".."), { recursive: true })
      writeFileSync(join(scratch, path), content)
    }
    gitRun(scratch, "add", "-A")
    gitRun(scratch, "commit", "-q", "-m", "initial commit")
    gitRun(scratch, "push", "-q", dir, "HEAD:refs/heads/main")
    const repo: Repo = { ...this.emptyRepo(owner, name, dir), private: options.private ?? true }
    this.repos.set(fullName.toLowerCase(), repo)
    return repo
  }

  /** A commit of `files` on `branch` (created from `from` when it does not exist yet); its SHA. */
  commitFiles(repo: Repo, branch: string, files: Record<string, string>, message: string, from = "main"): string {
    const scratch = mkdtempSync(join(this.root, "edit-"))
    const start = this.sha(repo, `refs/heads/${branch}`) === undefined ? from : branch
    gitRun(this.root, "clone", "-q", "--branch", start, repo.dir, scratch)
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(join(scratch, path, ".."), { recursive: true })
      writeFileSync(join(scratch, path), content)
    }
    gitRun(scratch, "add", "-A")
    gitRun(scratch, "commit", "-q", "-m", message)
    gitRun(scratch, "push", "-q", "origin", `HEAD:refs/heads/${branch}`)
    return gitRun(scratch, "rev-parse", "HEAD")
  }

  /** A fork of `repo` under `owner`: a copy of its git, its parent named. */
  fork(repo: Repo, owner: string): Repo {
    const dir = join(this.root, "git", owner, `${repo.name}.git`)
    gitRun(this.root, "clone", "-q", "--bare", repo.dir, dir)
    const fork: Repo = {
      ...this.emptyRepo(owner, repo.name, dir),
      private: repo.private,
      parent: `${repo.owner}/${repo.name}`
    }
    this.repos.set(`${owner}/${repo.name}`.toLowerCase(), fork)
    return fork
  }

  /** Where a pull request's head lives (this repository or a fork) and its SHA there. */
  pullHead(repo: Repo, pull: Pull): { readonly repo: Repo | undefined; readonly sha: string | undefined } {
    const [owner, name] = (pull.headRepo ?? `${repo.owner}/${repo.name}`).split("/")
    const head = this.repo(owner, name)
    return { repo: head, sha: head === undefined ? undefined : this.sha(head, `refs/heads/${pull.head}`) }
  }

  /** GitHub keeps `refs/pull/<n>/head` at each pull request's head (its fork's branch included). */
  syncPullRefs(repo: Repo): void {
    for (const pull of repo.pulls) {
      const { repo: head, sha } = this.pullHead(repo, pull)
      if (head === undefined || sha === undefined) continue
      if (head !== repo) {
        gitRun(repo.dir, "fetch", "-q", head.dir, `+refs/heads/${pull.head}:refs/pull/${pull.number}/head`)
      } else gitRun(repo.dir, "update-ref", `refs/pull/${pull.number}/head`, sha)
    }
  }

  private emptyRepo(owner: string, name: string, dir: string): Repo {
    return {
      id: this.id(),
      owner,
      name,
      private: true,
      dir,
      issues: [],
      pulls: [],
      labels: ["bug", "enhancement"],
      workflows: [],
      runs: [],
      dispatches: [],
      checks: [],
      statuses: []
    }
  }

  repo(owner: string, name: string): Repo | undefined {
    return this.repos.get(`${owner}/${name}`.toLowerCase())
  }

  addInstallation(
    account: string,
    repositories: Array<string>,
    type: "User" | "Organization" = "Organization"
  ): Installation {
    const installation: Installation = {
      id: this.id(),
      account: { login: account, id: this.id(), type },
      repositories,
      suspended: false
    }
    this.installations.set(installation.id, installation)
    return installation
  }

  addPerson(login: string, installations: Array<number>): Person {
    const person: Person = { id: this.id(), login, installations }
    this.people.set(login, person)
    return person
  }

  /** A new user token (8 hours) and refresh token (6 months) for `login`. */
  issueUserToken(login: string): UserTokenAnswer {
    const access = secret("ghu_")
    const refresh = secret("ghr_")
    this.tokens.set(access, { kind: "user", login, expired: false })
    this.refreshTokens.set(refresh, login)
    this.userTokens.push(access, refresh)
    return {
      access_token: access,
      token_type: "bearer",
      scope: "",
      expires_in: 28_800,
      refresh_token: refresh,
      refresh_token_expires_in: 15_897_600
    }
  }

  /** GitHub's side of time passing: every user token of `login` expired (refresh tokens still work). */
  expireUserTokens(login: string): void {
    for (const token of this.tokens.values()) if (token.kind === "user" && token.login === login) token.expired = true
  }

  /** The code GitHub would hand the callback after `login` authorized the app. */
  codeFor(login: string): string {
    const code = `code_${this.id()}`
    this.codes.set(code, login)
    return code
  }

  /** A SHA of a branch, or undefined. */
  sha(repo: Repo, ref: string): string | undefined {
    try {
      return gitRun(repo.dir, "rev-parse", "--verify", "-q", `${ref}^{commit}`)
    } catch {
      return undefined
    }
  }

  branches(repo: Repo): Array<{ name: string; sha: string }> {
    const out = gitRun(repo.dir, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads")
    return out === "" ? [] : out.split("\n").map((line) => {
      const [name, sha] = line.split(" ")
      return { name, sha }
    })
  }
}
