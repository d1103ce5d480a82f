/**
 * A string's UTF-8 bytes as a request body. TextEncoder always returns a fresh ArrayBuffer-backed
 * array, but the Workers types declare it ArrayBufferLike (maybe shared), which fetch bodies refuse.
 */
export const utf8Body = (text: string): Uint8Array<ArrayBuffer> =>
  new TextEncoder().encode(text) as Uint8Array<ArrayBuffer>;
