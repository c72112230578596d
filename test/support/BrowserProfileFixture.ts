/**
 * The browser profile the profile tests store: a session cookie `session=alice` for `site.test`,
 * which the tests' local site answers with "Logged in as alice".
 */
import type { BrowserProfilePut } from "../../domain/BrowserProfile.ts"

export const aliceProfile: BrowserProfilePut = {
  storageState: {
    cookies: [{
      name: "session",
      value: "alice",
      domain: "site.test",
      path: "/",
      expires: -1,
      httpOnly: true,
      secure: false,
      sameSite: "Lax"
    }],
    origins: []
  }
}
