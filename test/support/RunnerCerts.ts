/**
 * Certificates made with the openssl CLI in a scoped temporary directory:
 * for runner mutual TLS, a cluster CA with one runner certificate, and a
 * stranger's CA and certificate that the cluster must not accept; for a TLS
 * server of the tests (an https fake GitHub), a CA and a certificate for a
 * host name.
 */
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { tempDataDir } from "./ServiceProcess.ts"

export interface CertFiles {
  readonly ca: string
  readonly cert: string
  readonly key: string
}

const openssl = (dir: string, args: ReadonlyArray<string>) =>
  execFileSync("openssl", args, { cwd: dir, stdio: "ignore" })

/** A CA named `name` and a certificate it signed, as files in `dir`. */
const authority = (dir: string, name: string): CertFiles => {
  openssl(dir, [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "2",
    "-subj",
    `/CN=${name}-ca`,
    "-keyout",
    `${name}-ca.key`,
    "-out",
    `${name}-ca.pem`
  ])
  openssl(dir, [
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    `/CN=${name}-runner`,
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.csr`
  ])
  openssl(dir, [
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    `${name}-ca.pem`,
    "-CAkey",
    `${name}-ca.key`,
    "-CAcreateserial",
    "-days",
    "2",
    "-out",
    `${name}.pem`
  ])
  return { ca: join(dir, `${name}-ca.pem`), cert: join(dir, `${name}.pem`), key: join(dir, `${name}.key`) }
}

export const runnerCerts = Effect.flatMap(
  tempDataDir("svc-certs-"),
  (dir) => Effect.sync(() => ({ cluster: authority(dir, "cluster"), stranger: authority(dir, "stranger") }))
)

/** A CA and a server certificate it signed for `hostname` (subjectAltName), as PEM text. */
export const hostCerts = (hostname: string) =>
  Effect.flatMap(tempDataDir("svc-host-certs-"), (dir) =>
    Effect.sync(() => {
      openssl(dir, [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=test-ca",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem"
      ])
      openssl(dir, [
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        `/CN=${hostname}`,
        "-keyout",
        "host.key",
        "-out",
        "host.csr"
      ])
      writeFileSync(join(dir, "host.ext"), `subjectAltName=DNS:${hostname}\n`)
      openssl(dir, [
        "x509",
        "-req",
        "-in",
        "host.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "host.ext",
        "-out",
        "host.pem"
      ])
      const read = (name: string) => readFileSync(join(dir, name), "utf8")
      return { ca: read("ca.pem"), cert: read("host.pem"), key: read("host.key") }
    }))
