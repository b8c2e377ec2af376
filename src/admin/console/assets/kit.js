/*
 * The operator console's toolkit (docs/operator.md#console): calls of the admin API, and the
 * elements the screens are built from. Every value from the API becomes text (text nodes,
 * textContent), never HTML. The admin token, when the host has no operator session for this
 * browser, is kept in sessionStorage: this tab only.
 */
'use strict';
// A global of the page, for the other scripts, which load after this one.
const consoleKit = (() => {
  const API = new URL('.', location.href);
  const PARTS = new Set((document.body.dataset.parts || '').split(' ').filter(Boolean));
  const TOKEN_KEY = 'courier-platform.admin-token';
  const screen = document.getElementById('screen');
  const signIn = document.getElementById('sign-in');
  const nav = document.getElementById('nav');
  const signOut = document.getElementById('sign-out');

  // ---- the admin API -------------------------------------------------------------------------

  class ApiError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }
  /** Thrown once the sign-in form is up: the screen waits for the token. */
  class SignInNeeded extends Error {}

  const token = () => sessionStorage.getItem(TOKEN_KEY);

  /** The admin API's whole answer: its envelope, null when it had no JSON body. */
  async function call(method, path, body) {
    const headers = { accept: 'application/json' };
    const bearer = token();
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(new URL(path, API), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      cache: 'no-store',
    });
    let payload = null;
    try {
      payload = await response.json();
    } catch {
      payload = null;
    }
    if (response.status === 401) showSignIn('');
    if (response.status === 403 && bearer) {
      sessionStorage.removeItem(TOKEN_KEY);
      showSignIn('The admin API refused this token.');
    }
    // The host's operator check knows this browser but says no: the admin token may still admit it.
    if (response.status === 403) showSignIn(`${(payload && payload.message) || 'Refused'}. The admin token may admit you.`);
    if (!response.ok) throw new ApiError(response.status, (payload && payload.message) || `${response.status} ${response.statusText}`);
    return payload;
  }

  async function api(method, path, body) {
    const payload = await call(method, path, body);
    return payload ? payload.data : null;
  }

  /** One page of a listing (`GET {admin}/clients`, `GET {admin}/usage`): its `data` and the cursor of the next page, null on the last. */
  async function apiPage(path, params) {
    const payload = await call('GET', `${path}?${query(params)}`);
    return { items: payload.data, next: payload.next_cursor ?? null };
  }

  /** Applications a screen reads at once: as many as a browser has connections to one HTTP/1.1 origin. */
  const PARALLEL = 6;

  /**
   * `work` over `items`, at most `limit` at a time, the results in the items' order: a screen of
   * hundreds of applications must not open hundreds of requests at once. It stops taking items
   * at the first failure, and once `live()` is false (the screen was left); the items it left
   * have no result.
   */
  async function mapLimited(items, limit, work, live = () => true) {
    const results = new Array(items.length);
    let next = 0;
    async function worker() {
      while (next < items.length && live()) {
        const i = next++;
        try {
          results[i] = await work(items[i]);
        } catch (error) {
          next = items.length;
          throw error;
        }
      }
    }
    await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
    return results;
  }

  const query = (params) => new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== '')).toString();

  function showSignIn(message) {
    signIn.hidden = false;
    nav.hidden = true;
    signOut.hidden = true;
    screen.replaceChildren();
    document.getElementById('sign-in-error').textContent = message;
    document.getElementById('token').focus();
    throw new SignInNeeded();
  }

  // ---- building the page ---------------------------------------------------------------------

  /** An element; strings among `children` become text nodes, so data is never parsed as HTML. */
  function el(tag, attributes = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) {
      if (value === undefined || value === false) continue;
      if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value === true ? '' : String(value));
    }
    for (const child of children.flat()) if (child !== undefined && child !== null) node.append(child instanceof Node ? child : String(child));
    return node;
  }

  const appLink = (client) => el('a', { href: `#/apps/${encodeURIComponent(client.id)}` }, client.name || client.id);
  const when = (iso) => new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  const number = (n) => Number(n).toLocaleString();

  function heading(text) {
    return el('h1', { tabindex: '-1' }, text);
  }

  function alertBox() {
    return el('p', { class: 'error', role: 'alert' });
  }

  function showError(box, error) {
    if (error instanceof SignInNeeded) throw error;
    box.textContent = error instanceof ApiError ? error.message : `Something went wrong: ${error.message}`;
  }

  /** A button that runs `work`, disabled meanwhile, with its failure shown in `box`. */
  function action(label, box, work, attributes = {}) {
    const button = el('button', { type: 'button', ...attributes }, label);
    button.addEventListener('click', async () => {
      button.disabled = true;
      box.textContent = '';
      try {
        await work();
      } catch (error) {
        if (!(error instanceof SignInNeeded)) showError(box, error);
      } finally {
        button.disabled = false;
      }
    });
    return button;
  }

  /** A secret shown this once, with a copy button. */
  function secretPanel(title, secret, note) {
    const status = el('span', { class: 'copied', role: 'status' });
    const code = el('code', { class: 'secret-value' }, secret);
    const copy = el('button', { type: 'button' }, 'Copy secret');
    copy.addEventListener('click', async () => {
      try {
        await navigator.clipboard.writeText(secret);
        status.textContent = 'Copied.';
      } catch {
        getSelection().selectAllChildren(code);
        status.textContent = 'Copying was refused: the secret is selected, copy it by hand.';
      }
    });
    return el('div', { class: 'secret panel' }, el('h2', {}, title), el('p', {}, note), code, el('div', { class: 'row' }, copy, status));
  }

  return { API, PARTS, PARALLEL, TOKEN_KEY, ApiError, SignInNeeded, token, api, apiPage, mapLimited, query, showSignIn, el, appLink, when, number, heading, alertBox, showError, action, secretPanel };
})();
