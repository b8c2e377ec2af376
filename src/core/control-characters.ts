/**
 * Text a store can keep as an id or a key: none of its characters a C0 control character or DEL
 * (whether it may be empty is the field's own rule). PostgreSQL text cannot hold a NUL, and no
 * client id, subject or API path has control characters, so such text is refused with a 400
 * rather than sent to a store.
 */
// eslint-disable-next-line no-control-regex
export const NO_CONTROL_CHARACTERS = /^[^\u0000-\u001f\u007f]*$/;

/** The words for text that `NO_CONTROL_CHARACTERS` refuses, after the name of the field. */
export const CONTROL_CHARACTERS_PROBLEM = 'must not contain control characters';
