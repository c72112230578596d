/**
 * Browser profiles (issue 30, spec 2.1.1 `browser.authenticated.profileKey`):
 * Playwright's storage state (`{ cookies, origins }`) kept for one workspace,
 * write-only like a secret value. The view never carries the contents.
 */
import { Schema } from "effect"

/** A profile's key, as in the path and in `authenticated.profileKey`. */
export const ProfileKey = Schema.String.check(
  Schema.isPattern(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, {
    message: "a profile key is 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit"
  })
)

const Cookie = Schema.Struct({
  name: Schema.String,
  value: Schema.String,
  domain: Schema.String,
  path: Schema.String,
  /** Unix seconds; -1 for a session cookie. */
  expires: Schema.Finite,
  httpOnly: Schema.Boolean,
  secure: Schema.Boolean,
  sameSite: Schema.Literals(["Strict", "Lax", "None"])
})

const Origin = Schema.Struct({
  origin: Schema.String,
  localStorage: Schema.Array(Schema.Struct({ name: Schema.String, value: Schema.String }))
})

/** Playwright's storage state. */
export const StorageState = Schema.Struct({
  cookies: Schema.Array(Cookie),
  origins: Schema.Array(Origin)
})
export type StorageState = typeof StorageState.Type

export const BrowserProfilePut = Schema.Struct({ storageState: StorageState })
export type BrowserProfilePut = typeof BrowserProfilePut.Type

export const BrowserProfile = Schema.Struct({
  profileKey: Schema.String,
  object: Schema.Literal("browser_profile"),
  createdAt: Schema.String,
  updatedAt: Schema.String
})
export type BrowserProfile = typeof BrowserProfile.Type

export const BrowserProfileLimits = {
  /** The stored state's JSON, at most (1 MiB). */
  maxStateBytes: 1024 * 1024
} as const
