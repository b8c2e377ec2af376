/** The call every quota target answers: the same tiny JSON, so only the limiter in front differs. */
export const PING_PATH = '/openapi/v1/ping';
export const PING_BODY = { ok: true };
export const isPingBody = (body: string) => body === '{"ok":true}';
