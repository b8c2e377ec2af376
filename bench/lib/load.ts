import { Agent, request } from 'node:http';
import autocannon from 'autocannon';
import { cpuPerRequest, cpuTime } from './cpu.js';
import type { RequestChain, Target } from './scenario.js';
import { percentile } from './stats.js';

export interface LoadResult {
  rps: number;
  /** ms; autocannon 9 records whole milliseconds. */
  p50: number;
  p99: number;
  requests: number;
  /** Connection errors, timeouts, non-2xx and bodies that fail `verify`. */
  errors: number;
  /** The target server's CPU time per request, µs, when its `pid` is known (lib/cpu.ts). */
  cpu?: { totalUs: number; mainUs: number };
}

/**
 * Closed-loop load at a fixed number of connections: autocannon, or for a target with a `chain`
 * the runner's own loop (`chainedLoad`).
 */
export async function loadTest(target: Target, connections: number, durationS: number): Promise<LoadResult> {
  const before = target.pid === undefined ? undefined : cpuTime(target.pid);
  const result = await load(target, connections, durationS);
  const cpu = cpuPerRequest(before, target.pid === undefined ? undefined : cpuTime(target.pid), result.requests);
  return cpu ? { ...result, cpu } : result;
}

async function load(target: Target, connections: number, durationS: number): Promise<LoadResult> {
  if (target.chain) return chainedLoad(target, connections, { durationMs: durationS * 1_000 });
  const result = await autocannon({
    url: target.url,
    method: target.method,
    headers: target.headers,
    body: target.body,
    connections,
    duration: durationS,
    timeout: 10,
    verifyBody: target.verify,
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    // errors already includes timeouts; non2xx and mismatches are separate counters.
    errors: result.errors + result.non2xx + result.mismatches,
  };
}

export interface LatencyResult {
  /** ms, fractional. */
  p50: number;
  p99: number;
  requests: number;
  errors: number;
}

interface Reply {
  status: number;
  text: string;
}

/** One request on `agent`; bounded by a 5 s socket timeout. `extra` headers go over the target's. */
function send(target: Target, agent: Agent | undefined, body: Buffer | undefined, extra?: Record<string, string>): Promise<Reply> {
  const url = new URL(target.url);
  const merged = extra ? { ...target.headers, ...extra } : target.headers;
  const headers = body ? { ...merged, 'content-length': String(body.length) } : merged;
  return new Promise((resolve, reject) => {
    const req = request({ agent, hostname: url.hostname, port: url.port, path: url.pathname + url.search, method: target.method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.setTimeout(5_000, () => req.destroy(new Error(`timeout after 5 s: ${target.method} ${target.url}`)));
    req.on('error', reject);
    req.end(body);
  });
}

const succeeded = (target: Target, reply: Reply) => reply.status >= 200 && reply.status < 300 && target.verify(reply.text);

/** The target's fixed request as a chain, so that one loop serves both kinds of target. */
function fixedChain(target: Target): RequestChain {
  const request = target.body === undefined ? {} : { body: target.body };
  return { next: () => request, answer: (status, text) => succeeded(target, { status, text }) };
}

const chainOf = (target: Target, connection: number): RequestChain => target.chain?.(connection) ?? fixedChain(target);

/** One request of a chain: the answer goes back to the chain, which says whether it succeeded. */
async function sendNext(target: Target, chain: RequestChain, agent: Agent | undefined): Promise<{ ok: boolean; reply?: Reply }> {
  const { body, headers } = chain.next();
  let reply: Reply;
  try {
    reply = await send(target, agent, body === undefined ? undefined : Buffer.from(body), headers);
  } catch {
    chain.answer(0, '');
    return { ok: false };
  }
  return { ok: chain.answer(reply.status, reply.text), reply };
}

/** Sends one request (connection 0's next one for a chained target) and throws, showing the answer, unless it is a success. */
export async function checkTarget(target: Target): Promise<void> {
  const { ok, reply } = await sendNext(target, chainOf(target, 0), undefined);
  if (!ok) {
    throw new Error(`${target.label}: ${target.method} ${target.url} answered ${reply ? `HTTP ${reply.status} ${reply.text.slice(0, 500)}` : 'nothing (connection error or timeout)'}`);
  }
}

export interface ClosedLoopLimits {
  /** Stop issuing requests after this long (default and at most 60 s). */
  durationMs?: number;
  /** Stop after this many requests in all (default 1 000 000). */
  requests?: number;
}

/**
 * The runner's own closed loop: `connections` virtual connections (keep-alive sockets of one
 * agent), each sending its chain's requests one after another, timed with hrtime. Used for
 * chained targets (autocannon 9 resets a connection's `context` every time it wraps around its
 * `requests` list, i.e. before every request when the list has one entry, so it cannot carry a
 * rotating token) and for exact request counts (`probe`). Bounded by `limits` and the 5 s
 * timeout of every request.
 */
export async function chainedLoad(target: Target, connections: number, limits: ClosedLoopLimits): Promise<LoadResult> {
  const maxRequests = Math.min(limits.requests ?? 1_000_000, 1_000_000);
  const deadline = Date.now() + Math.min(limits.durationMs ?? 60_000, 60_000);
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const samples: number[] = [];
  let issued = 0;
  let answered = 0;
  let errors = 0;
  const started = process.hrtime.bigint();
  try {
    await Promise.all(
      Array.from({ length: connections }, async (_, connection) => {
        const chain = chainOf(target, connection);
        while (issued < maxRequests && Date.now() < deadline) {
          issued++;
          const sent = process.hrtime.bigint();
          const { ok, reply } = await sendNext(target, chain, agent);
          if (reply) answered++;
          if (ok) samples.push(Number(process.hrtime.bigint() - sent) / 1e6);
          else errors++;
        }
      }),
    );
  } finally {
    agent.destroy();
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const sorted = Float64Array.from(samples).sort();
  // Like autocannon: every answer counts towards req/s, failures are counted as errors as well.
  return { rps: answered / seconds, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), requests: answered, errors };
}

/**
 * Latency at 1 connection with sub-millisecond resolution: one keep-alive socket, requests one
 * after another, timed with hrtime. Stops after `durationMs` or `maxRequests`, whichever comes first.
 */
export async function sequentialLatency(target: Target, durationMs: number, maxRequests = 100_000): Promise<LatencyResult> {
  // A fresh agent per run: a socket left idle between rounds may have been closed by the server.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const chain = chainOf(target, 0);
  const samples = new Float64Array(maxRequests);
  let count = 0;
  let errors = 0;
  try {
    // Warm-up: open the socket and let the JIT settle before timing (at most 200 requests or 1 s).
    const warmUntil = Date.now() + Math.min(1_000, durationMs);
    for (let i = 0; i < 200 && Date.now() < warmUntil; i++) await sendNext(target, chain, agent);

    const deadline = Date.now() + durationMs;
    while (count < maxRequests && Date.now() < deadline) {
      const started = process.hrtime.bigint();
      const { ok } = await sendNext(target, chain, agent);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (ok) samples[count++] = ms;
      else errors++;
    }
  } finally {
    agent.destroy();
  }
  const sorted = samples.subarray(0, count).sort();
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), requests: count, errors };
}

/**
 * Exactly `count` requests, one after another on `agent` (keep-alive, one socket), for counts
 * that must not depend on time (the instructions scenario). Answers how many failed.
 */
export async function sequentialRequests(target: Target, count: number, agent: Agent): Promise<number> {
  const chain = chainOf(target, 0);
  let failed = 0;
  for (let i = 0; i < count; i++) if (!(await sendNext(target, chain, agent)).ok) failed++;
  return failed;
}
