import type { IncomingMessage, ServerResponse } from 'node:http';
import { readText, serve } from './net.js';

/** A stand-in courier platform that misbehaves in one particular way. */
export interface FakeUpstream {
  readonly url: string;
  close(): Promise<void>;
  /** Requests received so far. */
  hits(): number;
  /** The JSON bodies received so far (unparsable ones as their text). */
  bodies(): unknown[];
}

/** `body` is the JSON the proxy sent (its text when unparsable). */
type Answer = (req: IncomingMessage, res: ServerResponse, body: unknown) => void;

async function fakeUpstream(answer: Answer): Promise<FakeUpstream> {
  let hits = 0;
  const bodies: unknown[] = [];
  const served = await serve((req, res) => {
    hits += 1;
    readText(req).then((text) => {
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
      bodies.push(body);
      answer(req, res, body);
    }, () => res.destroy());
  });
  return { url: served.url, close: served.close, hits: () => hits, bodies: () => bodies.slice() };
}

function reply(status: number, contentType: string, body: string): Answer {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': contentType });
    res.end(body);
  };
}

export const upstream500 = () => fakeUpstream(reply(500, 'application/json', '{"code":500,"message":"internal"}'));

export const upstreamHtml = () =>
  fakeUpstream(reply(200, 'text/html', '<html><body><h1>Welcome to nginx</h1></body></html>'));

/** 503 every time; hits() tells how many attempts the proxy made. */
export const upstream503 = () => fakeUpstream(reply(503, 'text/plain', 'Service Unavailable'));

/** Reads the request and never answers; close() drops the hanging connections. */
export const upstreamStall = () => fakeUpstream(() => {});

export const upstreamBusinessError = () =>
  fakeUpstream(reply(200, 'application/json', JSON.stringify({ code: 40004, message: 'bad thing', data: null })));

/**
 * A port nothing listens on: 1, below every range the system hands out, so no other test's server
 * can take it over (a port freed by closing a server can be, while the files run two at a time).
 */
export async function upstreamUnreachable(): Promise<FakeUpstream> {
  return { url: 'http://127.0.0.1:1', close: async () => {}, hits: () => 0, bodies: () => [] };
}

/**
 * Repeats what it was sent, as a careless upstream's debug output does: a refusal (code 40001)
 * quoting the sign and the signed string with `&key=<secret>` appended, or a success (an orderId
 * of `echo-ok`) whose data is the whole body received. `secret` is what the proxy signs with.
 */
export const upstreamEcho = (secret: string) =>
  fakeUpstream((_req, res, received) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const body = (received ?? {}) as Record<string, unknown>;
    const answer =
      body.orderId === 'echo-ok'
        ? { code: 0, message: 'ok', data: { received: body, [`key=${secret}`]: true } }
        : { code: 40001, message: `sign ${String(body.sign).toLowerCase()} does not match api=${String(body.api)}&key=${secret}`, data: null };
    res.end(JSON.stringify(answer));
  });

/** Success whose `data` is `levels` arrays nested in one another: valid JSON, well under 10 MiB. */
export const upstreamDeep = (levels: number) =>
  fakeUpstream(reply(200, 'application/json', `{"code":0,"message":"ok","data":${'['.repeat(levels)}${']'.repeat(levels)}}`));

/** Code 0 on an HTTP 404, as a gateway or a wrong URL can answer: not a success. */
export const upstream404Success = () =>
  fakeUpstream(reply(404, 'application/json', '{"code":0,"message":"ok","data":{"orderId":"SO1"}}'));

/** A refusal whose code, 1e999, parses as Infinity: a number JSON cannot write back. */
export const upstreamInfiniteCode = () =>
  fakeUpstream(reply(200, 'application/json', '{"code":1e999,"message":"refused","data":null}'));

/**
 * A success of 11 MiB, past the transport's 10 MiB: spaces inside its data string, streamed in
 * 64 KiB chunks (nothing of that size is held), with its length announced or not.
 */
export const upstreamHuge = ({ announced }: { announced: boolean }) =>
  fakeUpstream((_req, res) => {
    const head = '{"code":0,"message":"ok","data":"';
    const tail = '"}';
    const size = 11 * 1024 * 1024;
    res.writeHead(200, { 'content-type': 'application/json', ...(announced ? { 'content-length': String(size) } : {}) });
    res.write(head);
    const spaces = Buffer.alloc(64 * 1024, ' ');
    let left = size - head.length - tail.length;
    const pump = (): void => {
      while (left > 0 && !res.destroyed) {
        const part = left >= spaces.length ? spaces : spaces.subarray(0, left);
        left -= part.length;
        if (!res.write(part)) {
          res.once('drain', pump);
          return;
        }
      }
      if (!res.destroyed) res.end(tail);
    };
    pump();
  });
