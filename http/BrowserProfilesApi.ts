/** Contract of authenticated browser profiles (issue 30, spec 2.1.1 `browser.authenticated.profileKey`). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BrowserProfile, BrowserProfilePut, ProfileKey } from "../domain/BrowserProfile.ts"
import { Deleted, Page, PageQuery } from "../domain/Page.ts"
import { doc, docWithBody } from "./ApiDocs.ts"
import { ApiNotFound, ApiPayloadTooLarge } from "./ErrorEnvelope.ts"

const params = { profileKey: ProfileKey }

export const BrowserProfilesApi = HttpApiGroup.make("browserProfiles")
  .add(
    HttpApiEndpoint.get("list", "/v1/browser-profiles", { query: PageQuery, success: Page(BrowserProfile) })
      .annotateMerge(
        doc("List browser profiles", "The workspace's browser profiles, newest first, without their contents.")
      )
  )
  .add(
    HttpApiEndpoint.put("put", "/v1/browser-profiles/:profileKey", {
      params,
      payload: BrowserProfilePut,
      success: BrowserProfile,
      error: [ApiNotFound, ApiPayloadTooLarge]
    }).annotateMerge(
      docWithBody(
        "Store a browser profile",
        "Creates the profile or replaces its contents: Playwright's storage state (`{ cookies, origins }`, at most 1 MiB " +
          "as JSON), encrypted under the service's master key. Write-only: no answer shows the contents again. An agent " +
          "with `capabilities.browser.authenticated.profileKey` starts its browser with it and saves it back when the run ends.",
        BrowserProfilePut,
        {
          storageState: {
            cookies: [{
              name: "session",
              value: "exampleOnly",
              domain: "app.example.com",
              path: "/",
              expires: -1,
              httpOnly: true,
              secure: true,
              sameSite: "Lax"
            }],
            origins: []
          }
        }
      )
    )
  )
  .add(
    HttpApiEndpoint.delete("delete", "/v1/browser-profiles/:profileKey", {
      params,
      success: Deleted("browser_profile"),
      error: [ApiNotFound]
    }).annotateMerge(
      doc("Delete a browser profile", "Deletes the profile; 404 `browser_profile_not_found` if there is none.")
    )
  )
  .annotate(
    OpenApi.Description,
    "Browser profiles: logged-in browser sessions (cookies and local storage) the managed browser starts with, write-only."
  )
