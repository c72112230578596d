/**
 * The state of the fake GitHub: the app's installations, people and their
 * tokens, repositories (each a real bare git repository, so contents,
 * branches, commits and pushes are git's own) with their issues, pull
 * requests, reviews, workflows and checks, and gists.
 */
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export type Level = "read" | "write"
export type Permissions = Record<string, Level>

export interface Comment { id: number; body: string; user: string; created_at: string }
export interface Issue {
  number: number
  title: string
  body: string
  state: "open" | "closed"
  labels: Array<string>
  comments: Array<Comment>
  user: string
}
export interface Review { id: number; body: string; event: string; commit_id: string; user: string }
export interface Thread { id: string; path: string; line: number; body: string; resolved: boolean }
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
  user: string
}
export interface WorkflowRun { id: number; workflow_id: number; status: string; conclusion: string | null; head_branch: string; head_sha: string; name: string }
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
  dispatches: Array<{ workflow_id: number; ref: string }>
}
export interface Installation {
  id: number
  account: { login: string; id: number; type: "User" | "Organization" }
  repositories: Array<string>
  suspended: boolean
}
export interface Person { id: number; login: string; token: string; installations: Array<number> }
export type Token =
  | { kind: "installation"; installationId: number; repositories: Array<string>; permissions: Permissions; expires: number }
  | { kind: "user"; login: string }
export interface Gist { id: string; owner: string; description: string; public: boolean; files: Record<string, string>; comments: Array<Comment> }

export const gitRun = (cwd: string, ...args: ReadonlyArray<string>): string =>
  execFileSync("git", ["-c", "user.name=Octo Cat", "-c", "user.email=octo@example.com", "-c", "init.defaultBranch=main", ...args], {
    cwd,
    encoding: "utf8"
  }).trim()

export class FakeState {
  readonly root = mkdtempSync(join(tmpdir(), "svc-fake-github-"))
  readonly installations = new Map<number, Installation>()
  readonly people = new Map<string, Person>()
  readonly codes = new Map<string, string>()
  readonly tokens = new Map<string, Token>()
  readonly repos = new Map<string, Repo>()
  readonly gists = new Map<string, Gist>()
  /** Every installation token minted, with what it was narrowed to (tests assert narrowing). */
  readonly minted: Array<{ token: string; installationId: number; repositories: Array<string>; permissions: Permissions }> = []
  private next = 1000

  id(): number {
    return this.next++
  }

  /** A repository with files on `main` (one commit), served over git too. */
  addRepo(fullName: string, files: Record<string, string> = { "README.md": "# hello\n" }, options: { private?: boolean } = {}): Repo {
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
    const repo: Repo = {
      id: this.id(), owner, name, private: options.private ?? true, dir,
      issues: [], pulls: [], labels: ["bug", "enhancement"], workflows: [], runs: [], dispatches: []
    }
    this.repos.set(fullName.toLowerCase(), repo)
    return repo
  }

  repo(owner: string, name: string): Repo | undefined {
    return this.repos.get(`${owner}/${name}`.toLowerCase())
  }

  addInstallation(account: string, repositories: Array<string>, type: "User" | "Organization" = "Organization"): Installation {
    const installation: Installation = { id: this.id(), account: { login: account, id: this.id(), type }, repositories, suspended: false }
    this.installations.set(installation.id, installation)
    return installation
  }

  addPerson(login: string, installations: Array<number>): Person {
    const person: Person = { id: this.id(), login, token: `ghu_${login}_${this.id()}`, installations }
    this.people.set(login, person)
    this.tokens.set(person.token, { kind: "user", login })
    return person
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
