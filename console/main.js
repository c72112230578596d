/**
 * The console's entry point: sign in with an API key (kept in this tab's
 * sessionStorage only, never in a cookie or localStorage), then the
 * signed-in console (views/shell.js).
 */
import { createApi } from "./api.js"
import { field, h, messageOf, replace } from "./dom.js"
import { shell } from "./views/shell.js"

const storageKey = "svc-console-api-key"

const app = /** @type {HTMLElement} */ (document.getElementById("app"))

/**
 * The sign-in form; a key is kept only once the service accepted it.
 * @param {string} [message] why the reader is here again (a key that stopped working)
 */
const signIn = (message) => {
  const key = h("input", { attrs: { type: "password", autocomplete: "off", required: "", placeholder: "sk_…" } })
  const error = h("p", { class: "error", attrs: { role: "alert" } }, message ?? "")
  const button = h("button", { attrs: { type: "submit" } }, "Sign in")
  const form = h(
    "form",
    { class: "sign-in" },
    h("h1", {}, "Agent service console"),
    h(
      "p",
      {},
      "Sign in with an API key of the workspace you want to see. The key stays in this tab (session storage) and goes only to this service."
    ),
    field("API key", key),
    button,
    error
  )
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    const api = createApi(key.value.trim())
    button.disabled = true
    error.textContent = ""
    api.agents().then(
      () => {
        sessionStorage.setItem(storageKey, key.value.trim())
        workspace(key.value.trim())
      },
      (failure) => {
        button.disabled = false
        error.textContent = messageOf(failure)
      }
    )
  })
  replace(app, form)
  key.focus()
}

/** @param {string} key */
const workspace = (key) => {
  const signOut = () => {
    console.stop()
    sessionStorage.removeItem(storageKey)
    signIn()
  }
  const header = h(
    "header",
    { class: "top" },
    h("h1", {}, "Agent service console"),
    h("span", { class: "who" }, "Signed in with ", h("code", {}, `${key.slice(0, 7)}…`)),
    h("button", { attrs: { type: "button" }, on: { click: signOut } }, "Sign out")
  )
  const console = shell(createApi(key), header)
  replace(app, console.element)
}

const stored = sessionStorage.getItem(storageKey)
if (stored === null) signIn()
else {
  // A key from earlier in this tab: check it again (it may have been revoked).
  createApi(stored).agents().then(
    () => workspace(stored),
    (error) => {
      sessionStorage.removeItem(storageKey)
      signIn(messageOf(error))
    }
  )
}
