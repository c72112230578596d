/** The part of `s3rver` (a local S3-compatible server, JavaScript without types) the tests use. */
declare module "s3rver" {
  export interface S3rverOptions {
    readonly address?: string
    readonly port?: number
    readonly silent?: boolean
    readonly directory: string
    readonly configureBuckets?: ReadonlyArray<{ readonly name: string }>
  }
  export default class S3rver {
    constructor(options: S3rverOptions)
    run(): Promise<{ readonly address: string; readonly port: number }>
    close(): Promise<void>
  }
}
