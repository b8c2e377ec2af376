/**
 * The baseline peer: Express + http-proxy-middleware forwarding an already signed body to the
 * sandbox. No body parser, no validation, no signing.
 */
import { Agent, createServer } from 'node:http';
import express from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { announceReady, listenLocal, requireEnv, stopServer } from '../lib/child.js';

const app = express();
app.use(
  '/forward',
  createProxyMiddleware({
    target: requireEnv('SANDBOX_URL'),
    changeOrigin: true,
    // Without an agent http-proxy sends `Connection: close` and opens a TCP connection per
    // request; courier-platform reuses upstream connections, so the baseline must too.
    agent: new Agent({ keepAlive: true }),
  }),
);

const server = createServer(app);
announceReady(await listenLocal(server), () => stopServer(server));
