/**
 * A secret as stored: encrypted with one master key (AES-256-GCM). Storage
 * keeps it opaque; only src/secrets seals and opens it.
 */
export interface Sealed {
  /** base64 of iv (12 bytes) || tag (16 bytes) || ciphertext */
  readonly ciphertext: string
  readonly keyId: string
}
