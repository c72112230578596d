/**
 * `agent-service/client`: the typed client of the service's API.
 *
 * - Effect: `ServiceClient` (every endpoint of the contract, http/Api.ts) and
 *   `RunEvents` (a run's stream, resumed after disconnects).
 * - Promises: `createClient({ baseUrl, apiKey })`, its streams and its
 *   `chatTransport()` for the AI SDK's `useChat`.
 * - Failures: `ServiceError` (the service's envelope) and `ClientError`.
 */
export { type Chunk } from "../domain/Chunk.ts"
export type { MessagePart, ThreadMessage } from "../domain/ThreadMessage.ts"
export * from "./ChatTransport.ts"
export * from "./Client.ts"
export * from "./Failures.ts"
export type { UploadOptions } from "./FilesClient.ts"
export * from "./Inputs.ts"
export * as RunEvents from "./RunEvents.ts"
export * from "./ServiceClient.ts"
export * from "./ThreadHistory.ts"
