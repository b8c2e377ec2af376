import { header, type PlatformRequest } from './http.js';
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from './errors.js';
import { isPlainObject } from './plain-object.js';

export type BodyKind = 'json' | 'form';

export interface ReadBodyOptions {
  /** Largest body read from the stream, in bytes. */
  limit: number;
  /** Media types this endpoint accepts. */
  accept: readonly BodyKind[];
}

const MEDIA_TYPES: Record<BodyKind, string> = {
  json: 'application/json',
  form: 'application/x-www-form-urlencoded',
};

function kindOf(contentType: string | undefined): BodyKind | undefined {
  if (!contentType) return undefined;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json' || type.endsWith('+json')) return 'json';
  if (type === 'application/x-www-form-urlencoded') return 'form';
  return undefined;
}

async function readStream(stream: AsyncIterable<Uint8Array>, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream) {
      size += chunk.byteLength;
      if (size > limit) throw new PayloadTooLargeError(limit);
      chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    }
  } catch (error) {
    if (error instanceof PayloadTooLargeError) throw error;
    // The caller closed the connection before the body ended (Node's "aborted", Bun's and Deno's
    // own errors): the caller's doing, answered as a bad request, never logged as a server error.
    throw new BadRequestError('The request body could not be read: the connection closed before it ended');
  }
  return Buffer.concat(chunks, size);
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * JSON is UTF-8 (RFC 8259 8.1) and so is a form (WHATWG URL, application/x-www-form-urlencoded):
 * bytes that are not are refused, where a lenient decoding would pass U+FFFD on as the value.
 */
function utf8(bytes: Buffer): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new BadRequestError('Request body is not valid UTF-8');
  }
}

/**
 * The platform reads bodies as sent and decodes no content coding: a compressed body is refused
 * as such (RFC 9110 15.5.16) rather than parsed as if it were plain, which would answer with
 * misleading errors about its contents.
 */
function checkEncoding(encoding: string | undefined): void {
  if (encoding === undefined) return;
  const codings = encoding.split(',').map((coding) => coding.trim().toLowerCase()).filter((coding) => coding !== '' && coding !== 'identity');
  if (codings.length > 0) {
    throw new UnsupportedMediaTypeError(`Content-Encoding ${codings.join(', ')} is not supported: send the body uncompressed`, { 'accept-encoding': 'identity' });
  }
}

/** RFC 6749 section 3.1: a parameter sent more than once is an error, not a silent pick. */
function parseForm(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  // Counted apart from `out`, where a `__proto__` key sets nothing (except on Deno, which drops that accessor).
  const seen = new Set<string>();
  for (const [key, value] of new URLSearchParams(text)) {
    if (seen.has(key)) throw new BadRequestError(`Parameter ${key} must not be sent more than once`);
    seen.add(key);
    out[key] = value;
  }
  return out;
}

function parseText(text: string, kind: BodyKind): unknown {
  if (kind === 'form') return parseForm(text);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new BadRequestError('Request body is not valid JSON');
  }
}

/**
 * Returns the request body as a value. Uses what the host's body parser already produced when
 * there is one; otherwise reads the stream once, within `limit`. An empty body is `undefined`.
 */
export async function readBody(request: PlatformRequest, options: ReadBodyOptions): Promise<unknown> {
  const contentType = header(request, 'content-type');
  const kind = kindOf(contentType);
  const parsed = request.parsedBody;

  let raw: string;
  if (parsed !== undefined && !Buffer.isBuffer(parsed) && typeof parsed !== 'string') {
    // Some host parsers leave {} for a request that had no body at all.
    if (kind === undefined && isEmptyObject(parsed)) return undefined;
    // A host parser decoded it already (its own size limit applied); the media type rules stay ours.
    checkKind(kind, contentType, options);
    return parsed;
  }
  if (parsed !== undefined) {
    raw = Buffer.isBuffer(parsed) ? utf8(parsed) : (parsed as string);
  } else {
    checkEncoding(header(request, 'content-encoding'));
    const declared = Number(header(request, 'content-length'));
    if (declared > options.limit) throw new PayloadTooLargeError(options.limit);
    raw = request.body ? utf8(await readStream(request.body, options.limit)) : '';
  }

  if (raw.length === 0) return undefined;
  return parseText(raw, checkKind(kind, contentType, options));
}

function checkKind(kind: BodyKind | undefined, contentType: string | undefined, options: ReadBodyOptions): BodyKind {
  if (kind && options.accept.includes(kind)) return kind;
  const wanted = options.accept.map((k) => MEDIA_TYPES[k]).join(' or ');
  throw new UnsupportedMediaTypeError(`Send the body as ${wanted} (Content-Type was ${contentType ? `'${contentType}'` : 'missing'})`);
}

function isEmptyObject(value: unknown): boolean {
  return isPlainObject(value) && Object.keys(value).length === 0;
}
