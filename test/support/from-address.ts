/**
 * Requests sent from a chosen loopback address: every address in 127.0.0.0/8 reaches a server
 * listening on 127.0.0.1, so a test can play an attacker and a legitimate client that the server
 * tells apart by their sockets alone.
 */
import { request, type IncomingHttpHeaders } from 'node:http';

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The JSON body; `{ text }` when it is not JSON. */
  body: Record<string, unknown>;
}

export function postFormFrom(localAddress: string, url: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<Answer> {
  const body = new URLSearchParams(form).toString();
  return new Promise((resolve, reject) => {
    const outgoing = request(url, {
      method: 'POST',
      localAddress,
      // A connection of its own: a pooled socket would carry another address's requests.
      agent: false,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body), ...headers },
    });
    outgoing.on('error', reject);
    outgoing.on('response', (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('error', reject);
      incoming.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: Record<string, unknown>;
        try {
          parsed = JSON.parse(text) as Record<string, unknown>;
        } catch {
          parsed = { text };
        }
        resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, body: parsed });
      });
    });
    outgoing.end(body);
  });
}
