/**
 * Text a store can keep as an id or a key: none of its characters a control character, Unicode's
 * general category Cc: C0 (U+0000–U+001F), DEL and C1 (U+0080–U+009F; whether it may be empty is
 * the field's own rule). PostgreSQL text cannot hold a NUL, C1 holds line breaks (NEL) and a
 * terminal's escapes (CSI), and no client id, subject, API path or name has control characters,
 * so such text is refused with a 400 rather than sent to a store. Letters beyond ASCII are text.
 */
// eslint-disable-next-line no-control-regex
export const NO_CONTROL_CHARACTERS = /^[^\u0000-\u001f\u007f-\u009f]*$/;

/** The words for text that `NO_CONTROL_CHARACTERS` refuses, after the name of the field. */
export const CONTROL_CHARACTERS_PROBLEM = 'must not contain control characters';
