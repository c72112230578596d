/**
 * Certificates for runner mutual TLS, made with the openssl CLI in a scoped
 * temporary directory: a cluster CA with one runner certificate, and a
 * stranger's CA and certificate that the cluster must not accept.
 */
import { execFileSync } from "node:child_process"
import { join } from "node:path"
import { Effect } from "effect"
import { tempDataDir } from "./ServiceProcess.ts"

export interface CertFiles {
  readonly ca: string
  readonly cert: string
  readonly key: string
}

const openssl = (dir: string, args: ReadonlyArray<string>) => execFileSync("openssl", args, { cwd: dir, stdio: "ignore" })

/** A CA named `name` and a certificate it signed, as files in `dir`. */
const authority = (dir: string, name: string): CertFiles => {
  openssl(dir, ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", `/CN=${name}-ca`, "-keyout", `${name}-ca.key`, "-out", `${name}-ca.pem`])
  openssl(dir, ["req", "-newkey", "rsa:2048", "-nodes", "-subj", `/CN=${name}-runner`, "-keyout", `${name}.key`, "-out", `${name}.csr`])
  openssl(dir, ["x509", "-req", "-in", `${name}.csr`, "-CA", `${name}-ca.pem`, "-CAkey", `${name}-ca.key`, "-CAcreateserial", "-days", "2", "-out", `${name}.pem`])
  return { ca: join(dir, `${name}-ca.pem`), cert: join(dir, `${name}.pem`), key: join(dir, `${name}.key`) }
}

export const runnerCerts = Effect.flatMap(tempDataDir("svc-certs-"), (dir) =>
  Effect.sync(() => ({ cluster: authority(dir, "cluster"), stranger: authority(dir, "stranger") })))
