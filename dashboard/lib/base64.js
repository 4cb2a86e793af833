/** Bytes to base64, for `wasm_module` in JSON (the API's form of `bytes`). */

/** Characters per String.fromCharCode call: well under the engines' limit on arguments. */
const CHUNK = 0x8000;

/**
 * @param {Uint8Array} bytes
 * @returns {string}
 */
export function bytesToBase64(bytes) {
  let binary = '';
  for (let i = 0; i < bytes.length; i += CHUNK) binary += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  return btoa(binary);
}
