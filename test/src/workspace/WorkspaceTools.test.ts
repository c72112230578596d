/**
 * The workspace tools (issue 11) as the run loop will call them, through the
 * tool family, on the real sandbox: write then read a file, a command reads
 * it, edits that are absent or ambiguous fail clearly, glob and grep
 * results, a non-zero exit is a successful result, paths cannot leave the
 * workspace (`..`, absolute, symlinks), secrets are masked, outputs capped.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { ToolFamily } from "../../../src/tools/ToolFamily.ts"
import type { ToolOutcome } from "../../../src/tools/ToolOutcome.ts"
import { Sandbox } from "../../../src/workspace/Sandbox.ts"
import * as WorkspaceTools from "../../../src/workspace/WorkspaceTools.ts"
import { sandboxLayer, testLimits } from "../../support/TestSandbox.ts"

const secret = "tok_live_8f3a9c2e"

const toolsFor = (id: string, options: { readonly shell?: boolean; readonly outputBytes?: number } = {}) =>
  Effect.gen(function*() {
    const sandbox = yield* Sandbox
    const workspace = yield* sandbox.open(id, {
      ...testLimits,
      outputBytes: options.outputBytes ?? testLimits.outputBytes
    })
    return WorkspaceTools.make({
      sandbox,
      workspace,
      shell: options.shell ?? true,
      env: { API_TOKEN: secret },
      secrets: [secret]
    })
  })

const call = (tools: ToolFamily, name: string, input: unknown): Effect.Effect<ToolOutcome> => {
  const run = tools.call(name, input, { id: "tc_test", step: 0 })
  assert.isDefined(run, `${name} is a tool of the family`)
  return run ?? Effect.die("unreachable")
}

describe("workspace tools", () => {
  // Live services: the tools run real processes with real wall time.
  layer(sandboxLayer, { excludeTestServices: true })((it) => {
    it.effect("offers the file tools, and bash only with shell", () =>
      Effect.gen(function*() {
        const withShell = yield* toolsFor("ws_specs_shell")
        assert.deepStrictEqual(withShell.specs.map((s) => s.name), [
          "read_file",
          "write_file",
          "edit_file",
          "glob",
          "grep",
          "bash"
        ])
        const filesOnly = yield* toolsFor("ws_specs_files", { shell: false })
        assert.deepStrictEqual(filesOnly.specs.map((s) => s.name), [
          "read_file",
          "write_file",
          "edit_file",
          "glob",
          "grep"
        ])
        assert.isUndefined(filesOnly.call("bash", { command: "true" }, { id: "tc_test", step: 0 }))
        assert.isUndefined(withShell.call("mcp__x__y", {}, { id: "tc_test", step: 0 }))
        assert.isUndefined(withShell.policyOf("bash"))
      }))

    it.effect("write_file then read_file; a bash command reads the file; a non-zero exit is a result carrying the code", () =>
      Effect.gen(function*() {
        const tools = yield* toolsFor("ws_roundtrip")
        const written = yield* call(tools, "write_file", { path: "src/notes.txt", content: "alpha\nbeta\ngamma\n" })
        assert.deepStrictEqual(written, {
          output: { path: "src/notes.txt", bytes: 17 },
          text: "Wrote 17 bytes to src/notes.txt.",
          isError: false
        })
        const read = yield* call(tools, "read_file", { path: "src/notes.txt" })
        assert.deepStrictEqual(read.output, {
          path: "src/notes.txt",
          content: "alpha\nbeta\ngamma\n",
          startLine: 1,
          endLine: 3,
          totalLines: 3,
          truncated: false
        })
        assert.strictEqual(read.text, "1\talpha\n2\tbeta\n3\tgamma")
        const part = yield* call(tools, "read_file", { path: "src/notes.txt", offset: 2, limit: 1 })
        assert.strictEqual(part.text, "2\tbeta\n(lines 2-2 of 3; read on with offset 3)")
        const bash = yield* call(tools, "bash", { command: "wc -l < notes.txt; cat missing", cwd: "src" })
        assert.deepStrictEqual(bash.output, {
          exitCode: 1,
          stdout: "3\n",
          stderr: "cat: missing: No such file or directory\n"
        })
        assert.isFalse(bash.isError)
        assert.deepStrictEqual(JSON.parse(bash.text), bash.output)
      }))

    it.effect("edit_file replaces one exact occurrence, refuses an absent or ambiguous oldString, and replaces all on request", () =>
      Effect.gen(function*() {
        const tools = yield* toolsFor("ws_edit")
        yield* call(tools, "write_file", { path: "app.ts", content: "let a = 1\nlet b = 1\nconst c = 2\n" })
        const absent = yield* call(tools, "edit_file", { path: "app.ts", oldString: "let d", newString: "let e" })
        assert.deepStrictEqual(absent, {
          output: {
            type: "tool-output-error",
            error: {
              code: "workspace_error",
              message: "oldString was not found in app.ts; read the file and copy the text exactly"
            }
          },
          text: "workspace_error: oldString was not found in app.ts; read the file and copy the text exactly",
          isError: true
        })
        const ambiguous = yield* call(tools, "edit_file", { path: "app.ts", oldString: "= 1", newString: "= 9" })
        assert.strictEqual(
          ambiguous.text,
          "workspace_error: oldString occurs 2 times in app.ts; give more surrounding text to make it unique, or set replaceAll"
        )
        assert.isTrue(ambiguous.isError)
        const unique = yield* call(tools, "edit_file", {
          path: "app.ts",
          oldString: "const c = 2",
          newString: "const c = $& 3"
        })
        assert.deepStrictEqual(unique.output, { path: "app.ts", replacements: 1 })
        const all = yield* call(tools, "edit_file", {
          path: "app.ts",
          oldString: "= 1",
          newString: "= 9",
          replaceAll: true
        })
        assert.strictEqual(all.text, "Replaced 2 occurrences in app.ts.")
        const read = yield* call(tools, "read_file", { path: "app.ts" })
        assert.strictEqual((read.output as { content: string }).content, "let a = 9\nlet b = 9\nconst c = $& 3\n")
        const missing = yield* call(tools, "edit_file", { path: "nope.ts", oldString: "x", newString: "y" })
        assert.strictEqual(missing.text, "workspace_error: no such file: nope.ts")
      }))

    it.effect("glob lists matches relative to the root; grep finds lines with paths and numbers, filtered by glob", () =>
      Effect.gen(function*() {
        const tools = yield* toolsFor("ws_search")
        yield* call(tools, "bash", {
          command:
            "mkdir -p src/lib docs && printf 'export const answer = 42\\n' > src/main.ts && printf 'const x = 1\\n// answer here\\n' > src/lib/util.ts && printf 'the answer\\n' > docs/readme.md"
        })
        const ts = yield* call(tools, "glob", { pattern: "**/*.ts" })
        assert.deepStrictEqual(ts.output, { matches: ["src/lib/util.ts", "src/main.ts"], truncated: false })
        const under = yield* call(tools, "glob", { pattern: "*", path: "src" })
        assert.deepStrictEqual(under.output, { matches: ["src/lib/", "src/main.ts"], truncated: false })
        const none = yield* call(tools, "glob", { pattern: "*.py" })
        assert.strictEqual(none.text, "No match.")
        const found = yield* call(tools, "grep", { pattern: "answer", glob: "*.ts" })
        assert.deepStrictEqual(found.output, {
          matches: [{ path: "src/lib/util.ts", line: 2, text: "// answer here" }, {
            path: "src/main.ts",
            line: 1,
            text: "export const answer = 42"
          }],
          truncated: false
        })
        const inDocs = yield* call(tools, "grep", { pattern: "ans(w|x)er$", path: "docs" })
        assert.strictEqual(inDocs.text, "docs/readme.md:1:the answer")
        const bad = yield* call(tools, "grep", { pattern: "(" })
        assert.isTrue(bad.isError)
        assert.match(bad.text, /Unmatched \(/)
      }))

    it.effect("paths stay inside the workspace: .., absolute paths and symlinks out are refused", () =>
      Effect.gen(function*() {
        const tools = yield* toolsFor("ws_paths")
        yield* call(tools, "bash", { command: "ln -s /etc/passwd passwd-link && ln -s /tmp tmp-link && ln -s .. up" })
        const cases: Array<[string, unknown, string]> = [
          ["read_file", { path: "../../etc/passwd" }, "workspace_error: '../../etc/passwd' is outside the workspace"],
          [
            "read_file",
            { path: "/etc/passwd" },
            "workspace_error: '/etc/passwd' is absolute; give a path relative to the workspace root"
          ],
          ["read_file", { path: "passwd-link" }, "workspace_error: 'passwd-link' resolves outside the workspace"],
          [
            "write_file",
            { path: "tmp-link/x", content: "x" },
            "workspace_error: 'tmp-link/x' resolves outside the workspace"
          ],
          ["glob", { pattern: "*", path: "up" }, "workspace_error: 'up' resolves outside the workspace"],
          ["glob", { pattern: "../*" }, "workspace_error: the pattern must not contain '..'"],
          [
            "grep",
            { pattern: "root", path: "passwd-link" },
            "workspace_error: 'passwd-link' resolves outside the workspace"
          ],
          ["bash", { command: "pwd", cwd: "../.." }, "workspace_error: cwd: '../..' is outside the workspace"]
        ]
        for (const [name, input, text] of cases) {
          const outcome = yield* call(tools, name, input)
          assert.deepStrictEqual([name, outcome.text, outcome.isError], [name, text, true])
        }
        const invalid = yield* call(tools, "write_file", { path: "x" })
        assert.isTrue(invalid.isError)
        assert.deepStrictEqual(invalid, {
          output: {
            type: "tool-output-error",
            error: { code: "invalid_tool_input", message: "Invalid input for write_file: content: Missing key" }
          },
          text: "invalid_tool_input: Invalid input for write_file: content: Missing key",
          isError: true
        })
      }))

    it.effect("injected secrets are set in commands and masked in every output, files read back included", () =>
      Effect.gen(function*() {
        const tools = yield* toolsFor("ws_secrets")
        const printed = yield* call(tools, "bash", {
          command: "echo \"token=$API_TOKEN\"; echo $API_TOKEN >&2; echo $API_TOKEN > leaked.txt; [ \"$API_TOKEN\" = " +
            secret + " ] && echo set"
        })
        assert.deepStrictEqual(printed.output, { exitCode: 0, stdout: "token=***\nset\n", stderr: "***\n" })
        assert.notInclude(printed.text, secret)
        const read = yield* call(tools, "read_file", { path: "leaked.txt" })
        assert.strictEqual(read.text, "1\t***")
        const grep = yield* call(tools, "grep", { pattern: "tok_" })
        assert.strictEqual(grep.text, "leaked.txt:1:***")
      }))

    it.effect("outputs over the cap are cut and marked truncated; read_file says where to read on", () =>
      Effect.gen(function*() {
        const tools = yield* toolsFor("ws_cap", { outputBytes: 100 })
        const big = yield* call(tools, "bash", { command: "seq 1 1000" })
        const output = big.output as { stdout: string; truncated: boolean }
        assert.strictEqual(output.stdout.length, 100)
        assert.isTrue(output.truncated)
        yield* call(tools, "bash", { command: "seq 1 1000 > n.txt" })
        const read = yield* call(tools, "read_file", { path: "n.txt" })
        assert.isTrue((read.output as { truncated: boolean }).truncated)
        assert.match(read.text, /\(output cut at the size cap after line 37; read on with offset 38\)$/)
      }))

    it.effect("a limit hit by bash is an error result naming the limit", () =>
      Effect.gen(function*() {
        const tools = yield* toolsFor("ws_tool_wall")
        const slow = yield* call(tools, "bash", { command: "echo begun; sleep 20", timeoutMs: 300 })
        assert.isTrue(slow.isError)
        assert.deepStrictEqual(slow.output, {
          type: "tool-output-error",
          error: {
            code: "workspace_limit",
            message: "the command ran longer than its wall time of 300 ms and was killed",
            details: { limit: "wall_time", exitCode: 137, stdout: "begun\n", stderr: "" }
          }
        })
        const tooLong = yield* call(tools, "bash", { command: "true", timeoutMs: testLimits.maxTimeoutMs + 1 })
        assert.strictEqual(tooLong.text, "workspace_error: timeoutMs must be between 1 and 10000 in this workspace")
      }))
  })
})
