/**
 * Characters no name may hold, defined once for every place a name comes in (createResource,
 * uploadResource's file name and field, tus Upload-Metadata, updateResource, zip entry paths) and
 * for the names we send back out (Content-Disposition).
 */

/** C0, DEL and C1 controls: invisible in logs and UIs; NUL truncates names in C APIs; CR/LF split headers. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** U+2028/U+2029: line terminators to JavaScript patterns (the router's among them). */
const LINE_SEPARATOR = /[\u2028\u2029]/;
/**
 * Unicode's Bidi_Control (UAX #9): the embeddings and overrides U+202A–U+202E, the isolates
 * U+2066–U+2069 and the marks U+061C, U+200E, U+200F. Invisible, they reorder what follows, so
 * "invoice\u202Efdp.exe" displays as "invoiceexe.pdf". Right-to-left letters themselves are fine.
 */
const BIDI_CONTROL = /\p{Bidi_Control}/u;
const MASKED = /[\u0000-\u001f\u007f-\u009f]|\p{Bidi_Control}/gu;

export const hasControlChar = (s: string): boolean => CONTROL.test(s);
export const hasLineSeparator = (s: string): boolean => LINE_SEPARATOR.test(s);
export const hasBidiControl = (s: string): boolean => BIDI_CONTROL.test(s);

/** `s` with each control and bidirectional control replaced by "_": for names stored before they were refused. */
export const maskUnsafeChars = (s: string): string => s.replace(MASKED, "_");
