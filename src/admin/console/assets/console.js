/*
 * The operator console (docs/operator.md#console): a small single-page app over the admin API.
 * Hash routes: #/ overview, #/apps applications, #/apps/<id> one application, #/rules rules.
 * Every value from the API is rendered with textContent, never as HTML. The admin token, when the
 * host has no operator session for this browser, is kept in sessionStorage: this tab only.
 */
'use strict';
(() => {
  const API = new URL('.', location.href);
  const PARTS = new Set((document.body.dataset.parts || '').split(' ').filter(Boolean));
  const TOKEN_KEY = 'courier-platform.admin-token';
  const HOUR = 3600e3;
  const DAY = 24 * HOUR;
  const screen = document.getElementById('screen');
  const signIn = document.getElementById('sign-in');
  const nav = document.getElementById('nav');
  const signOut = document.getElementById('sign-out');
  let generation = 0;
  const charts = [];

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

  async function api(method, path, body) {
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
    if (!response.ok) throw new ApiError(response.status, (payload && payload.message) || `${response.status} ${response.statusText}`);
    return payload ? payload.data : null;
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

  document.getElementById('sign-in-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const field = document.getElementById('token');
    sessionStorage.setItem(TOKEN_KEY, field.value.trim());
    field.value = '';
    signIn.hidden = true;
    render();
  });

  // The hash holds the screen, so the skip link moves the focus without following its href.
  document.querySelector('.skip').addEventListener('click', (event) => {
    event.preventDefault();
    document.getElementById('main').focus();
  });

  signOut.addEventListener('click', () => {
    sessionStorage.removeItem(TOKEN_KEY);
    try {
      showSignIn('');
    } catch {
      // the form is up
    }
  });

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

  // ---- usage ---------------------------------------------------------------------------------

  function periodBar(period) {
    const label = el('span', { class: 'period' }, period.period);
    const reset = el('span', { class: 'muted' }, `resets ${when(period.reset_at)}`);
    if (period.unlimited) return el('div', { class: 'bar-row' }, label, el('span', {}, `${number(period.used)} used, unlimited`), reset);
    const share = period.limit > 0 ? Math.min(1, period.used / period.limit) : 0;
    const fill = el('span', { class: share >= 1 ? 'fill full' : share >= 0.8 ? 'fill high' : 'fill' });
    fill.style.width = `${(share * 100).toFixed(1)}%`;
    const bar = el('span', {
      class: 'bar',
      role: 'meter',
      'aria-valuemin': 0,
      'aria-valuemax': period.limit,
      'aria-valuenow': period.used,
      'aria-label': `${period.period}: ${period.used} of ${period.limit}`,
    }, fill);
    return el('div', { class: 'bar-row' }, label, bar, el('span', { class: 'figure' }, `${number(period.used)} / ${number(period.limit)}`), reset);
  }

  function usageList(usage) {
    if (!usage.endpoints.length) return el('p', { class: 'muted' }, 'No calls in the current periods.');
    return el(
      'ul',
      { class: 'endpoints' },
      usage.endpoints.map((endpoint) =>
        el('li', {}, el('div', { class: 'endpoint' }, el('code', {}, endpoint.api_path), el('span', { class: 'muted' }, ` ${endpoint.scope} rule, cost ${endpoint.cost}`)), endpoint.periods.map(periodBar)),
      ),
    );
  }

  // ---- history and charts --------------------------------------------------------------------

  const STEPS = {
    hour: { size: HOUR, span: 48 * HOUR, label: 'Hourly, last 48 hours' },
    day: { size: DAY, span: 30 * DAY, label: 'Daily, last 30 days' },
  };

  /** An application's history summed over its endpoints, one slot per step; null when there is none (404). */
  async function history(clientId, step) {
    const { size, span } = STEPS[step];
    const end = Math.floor(Date.now() / size) * size;
    const start = end - span + size;
    let data;
    try {
      data = await api('GET', `usage/history?${query({ client_id: clientId, step, from: new Date(start).toISOString(), to: new Date(end + size).toISOString() })}`);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return null;
      throw error;
    }
    const slots = Math.round(span / size);
    const at = Array.from({ length: slots }, (_, i) => (start + i * size) / 1000);
    const admitted = new Array(slots).fill(0);
    const rejected = new Array(slots).fill(0);
    for (const series of data.series || []) {
      for (const point of series.points || []) {
        const i = Math.round((Date.parse(point.at) - start) / size);
        if (i < 0 || i >= slots) continue;
        admitted[i] += point.admitted;
        rejected[i] += point.rejected;
      }
    }
    return { at, admitted, rejected };
  }

  function sumHistories(list) {
    const present = list.filter(Boolean);
    if (!present.length) return null;
    const total = { at: present[0].at, admitted: present[0].admitted.map(() => 0), rejected: present[0].rejected.map(() => 0) };
    for (const h of present) h.admitted.forEach((n, i) => ((total.admitted[i] += n), (total.rejected[i] += h.rejected[i])));
    return total;
  }

  const totals = (h) => ({ admitted: h.admitted.reduce((a, b) => a + b, 0), rejected: h.rejected.reduce((a, b) => a + b, 0) });

  function chart(container, h, title) {
    container.replaceChildren();
    if (!h) {
      container.append(el('p', { class: 'muted no-history' }, 'No history.'));
      return;
    }
    const sum = totals(h);
    container.append(el('p', { class: 'muted' }, `${title}: ${number(sum.admitted)} calls admitted, ${number(sum.rejected)} refused (429).`));
    const plot = el('div', { class: 'chart', role: 'img', 'aria-label': `${title}: calls admitted and refused over time` });
    container.append(plot);
    const width = () => Math.max(280, plot.clientWidth || container.clientWidth || 600);
    const instance = new uPlot(
      {
        width: width(),
        height: 220,
        scales: { x: { time: true } },
        series: [{}, { label: 'Admitted', stroke: '#2456d3', fill: 'rgba(36,86,211,0.12)', width: 2 }, { label: '429', stroke: '#c62828', width: 2 }],
        axes: [{}, { size: 56 }],
      },
      [h.at, h.admitted, h.rejected],
      plot,
    );
    charts.push(instance);
    new ResizeObserver(() => instance.setSize({ width: width(), height: 220 })).observe(plot);
  }

  function stepSwitch(onChange) {
    const buttons = Object.entries(STEPS).map(([step, { label }]) =>
      el('button', { type: 'button', class: 'toggle', 'aria-pressed': step === 'hour' ? 'true' : 'false', onclick: () => select(step) }, label),
    );
    function select(step) {
      buttons.forEach((b, i) => b.setAttribute('aria-pressed', Object.keys(STEPS)[i] === step ? 'true' : 'false'));
      onChange(step);
    }
    return el('div', { class: 'row', role: 'group', 'aria-label': 'Steps' }, buttons);
  }

  // ---- screens -------------------------------------------------------------------------------

  async function overview(view) {
    view.append(heading('Overview'));
    if (!PARTS.has('clients')) {
      view.append(el('p', {}, 'The OAuth server is off here, so there are no applications to show.'));
      return;
    }
    const clients = await api('GET', 'clients');
    const box = alertBox();
    const area = el('div', { class: 'panel' });
    const top = el('div', { class: 'panel' });
    view.append(box, el('h2', {}, 'Calls and 429s'), stepSwitch(draw), area, top);
    async function draw(step) {
      try {
        const histories = await Promise.all(clients.map((client) => history(client.id, step)));
        chart(area, sumHistories(histories), `All applications, ${STEPS[step].label.toLowerCase()}`);
        ranking(histories, step);
      } catch (error) {
        showError(box, error);
      }
    }
    function ranking(histories, step) {
      const rows = clients
        .map((client, i) => ({ client, sum: histories[i] ? totals(histories[i]) : undefined }))
        .filter((row) => row.sum && row.sum.admitted + row.sum.rejected > 0)
        .sort((a, b) => b.sum.admitted + b.sum.rejected - (a.sum.admitted + a.sum.rejected))
        .slice(0, 10);
      top.replaceChildren(el('h2', {}, 'Top applications'));
      if (!histories.some(Boolean)) return top.append(el('p', { class: 'muted' }, 'No history.'));
      if (!rows.length) return top.append(el('p', { class: 'muted' }, `No calls, ${STEPS[step].label.toLowerCase()}.`));
      top.append(
        el(
          'table',
          {},
          el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Application'), el('th', { scope: 'col' }, 'Calls'), el('th', { scope: 'col' }, '429s'))),
          el('tbody', {}, rows.map((row) => el('tr', {}, el('td', {}, appLink(row.client)), el('td', {}, number(row.sum.admitted)), el('td', {}, number(row.sum.rejected))))),
        ),
      );
    }
    await draw('hour');
  }

  function registerForm(onRegistered) {
    const box = alertBox();
    const form = el(
      'form',
      { class: 'stack' },
      el('label', { for: 'reg-name' }, 'Name'),
      el('input', { id: 'reg-name', name: 'name', required: true, maxlength: 200 }),
      el('label', { for: 'reg-uris' }, 'Redirect URIs, one a line'),
      el('textarea', { id: 'reg-uris', name: 'uris', rows: 2, required: true }),
      el('label', { class: 'check' }, el('input', { type: 'checkbox', name: 'public' }), ' Public client (no secret; PKCE)'),
      el('button', { type: 'submit' }, 'Register'),
      box,
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      box.textContent = '';
      const data = new FormData(form);
      const body = { name: String(data.get('name')).trim(), redirectUris: String(data.get('uris')).split(/\s+/).filter(Boolean) };
      if (data.get('public')) body.public = true;
      try {
        const result = await api('POST', 'clients', body);
        form.reset();
        onRegistered(result);
      } catch (error) {
        showError(box, error);
      }
    });
    return el('details', { class: 'panel' }, el('summary', {}, 'Register an application'), form);
  }

  async function lastUse(clientId) {
    const h = await history(clientId, 'day');
    if (!h) return 'unknown (no history)';
    for (let i = h.at.length - 1; i >= 0; i--) if (h.admitted[i] + h.rejected[i] > 0) return new Date(h.at[i] * 1000).toLocaleDateString(undefined, { dateStyle: 'medium' });
    return 'not in the last 30 days';
  }

  async function applications(view) {
    view.append(heading('Applications'));
    const notice = el('div');
    view.append(
      notice,
      registerForm((result) => {
        const note = result.client_secret ? 'Shown this once: copy it now. Only its hash is kept.' : 'A public client: it has no secret.';
        notice.replaceChildren(result.client_secret ? secretPanel(`Secret of ${result.client.name}`, result.client_secret, note) : el('p', { role: 'status' }, note));
        refresh();
      }),
    );
    const list = el('div', { class: 'cards' });
    view.append(list);
    async function refresh() {
      const clients = await api('GET', 'clients');
      const cards = await Promise.all(
        clients.map(async (client) => {
          const [usage, used] = await Promise.all([PARTS.has('usage') ? api('GET', `usage?${query({ client_id: client.id })}`) : null, lastUse(client.id)]);
          return el(
            'article',
            { class: 'card', 'aria-labelledby': `app-${client.id}` },
            el('h2', { id: `app-${client.id}` }, appLink(client)),
            el(
              'p',
              { class: 'meta' },
              el('span', { class: `badge ${client.status}` }, client.status),
              el('code', {}, client.id),
              el('span', { class: 'muted' }, client.source === 'options' ? 'configured' : 'registered'),
              el('span', { class: 'muted' }, `last use: ${used}`),
            ),
            usage ? usageList(usage) : null,
          );
        }),
      );
      list.replaceChildren(...(cards.length ? cards : [el('p', {}, 'No applications yet.')]));
    }
    await refresh();
  }

  async function application(view, id) {
    let client = await api('GET', `clients/${encodeURIComponent(id)}`);
    const title = heading(client.name);
    const box = alertBox();
    const notice = el('div');
    const details = el('dl', { class: 'details' });
    function describe() {
      title.textContent = client.name;
      const rows = [
        ['Id', el('code', {}, client.id)],
        ['Status', el('span', { class: `badge ${client.status}` }, client.status)],
        ['Source', client.source === 'options' ? 'configured in the options (read-only here)' : 'registered'],
        ['Type', client.public ? 'public (no secret)' : 'confidential'],
        ['Scopes', client.scopes.join(' ')],
        ['Grants', client.grants.join(', ')],
        ['Redirect URIs', el('ul', { class: 'plain' }, client.redirectUris.map((uri) => el('li', {}, el('code', {}, uri))))],
      ];
      if (client.previousSecretValidUntil) rows.push(['Previous secret works until', when(client.previousSecretValidUntil)]);
      details.replaceChildren(...rows.flatMap(([term, value]) => [el('dt', {}, term), el('dd', {}, value)]));
    }
    describe();
    view.append(el('p', {}, el('a', { href: '#/apps' }, '← Applications')), title, box, notice, details);

    const area = el('div');
    view.append(el('section', { class: 'panel' }, el('h2', {}, 'Usage'), stepSwitch((step) => draw(step)), area));
    async function draw(step) {
      try {
        chart(area, await history(client.id, step), STEPS[step].label);
      } catch (error) {
        showError(box, error);
      }
    }
    await draw('hour');
    if (PARTS.has('usage')) view.append(el('section', { class: 'panel' }, el('h2', {}, 'Current periods'), usageList(await api('GET', `usage?${query({ client_id: client.id })}`))));

    const actions = el('section', { class: 'panel' }, el('h2', {}, 'Actions'));
    view.append(actions);
    const path = `clients/${encodeURIComponent(client.id)}`;
    if (client.source === 'store') {
      const toggle = action(client.status === 'suspended' ? 'Resume' : 'Suspend', box, async () => {
        client = await api('PATCH', path, { status: client.status === 'suspended' ? 'active' : 'suspended' });
        toggle.textContent = client.status === 'suspended' ? 'Resume' : 'Suspend';
        notice.replaceChildren(el('p', { role: 'status' }, client.status === 'suspended' ? 'Suspended: its tokens stop working.' : 'Resumed.'));
        describe();
      });
      const row = el('div', { class: 'row' }, toggle);
      if (!client.public) {
        row.prepend(
          action('Rotate secret', box, async () => {
            const result = await api('POST', `${path}/secret`);
            notice.replaceChildren(secretPanel(`New secret of ${client.name}`, result.client_secret, `Shown this once: copy it now. The previous secret works until ${when(result.previous_valid_until)}.`));
            client = await api('GET', path);
            describe();
            notice.querySelector('button').focus();
          }),
        );
      }
      actions.append(row);
    } else {
      actions.append(el('p', { class: 'muted' }, 'A configured application: its secret and status change in the options.'));
    }

    const grantBox = el('p', { role: 'status' });
    const grantForm = el(
      'form',
      { class: 'inline' },
      el('label', { for: 'grant-sub' }, 'User (sub)'),
      el('input', { id: 'grant-sub', name: 'sub', required: true }),
      el('button', { type: 'submit' }, "End the user's grants"),
    );
    grantForm.addEventListener('submit', async (event) => {
      event.preventDefault();
      const sub = String(new FormData(grantForm).get('sub')).trim();
      try {
        await api('DELETE', `grants?${query({ client_id: client.id, sub })}`);
        grantBox.textContent = `The grants of ${sub} at this application ended, and its consent is forgotten.`;
        grantForm.reset();
      } catch (error) {
        showError(box, error);
      }
    });
    actions.append(el('h3', {}, "End a user's grants"), grantForm, grantBox);

    if (client.source === 'store') {
      const confirmation = el('div', { class: 'confirm', hidden: true });
      const ask = el('button', { type: 'button', class: 'danger', onclick: () => ((confirmation.hidden = false), confirmation.querySelector('button').focus()) }, 'Delete…');
      confirmation.append(
        el('p', {}, `Delete ${client.name}? Its tokens stop working and its users' grants end. This cannot be undone.`),
        el(
          'div',
          { class: 'row' },
          action('Delete for good', box, async () => {
            await api('DELETE', path);
            location.hash = '#/apps';
          }, { class: 'danger' }),
          el('button', { type: 'button', onclick: () => ((confirmation.hidden = true), ask.focus()) }, 'Cancel'),
        ),
      );
      actions.append(el('h3', {}, 'Delete'), ask, confirmation);
    }
  }

  const RULE_FIELDS = ['minute', 'day', 'month', 'cost'];

  async function rules(view) {
    view.append(heading('Rules'));
    const box = alertBox();
    const status = el('p', { role: 'status' });
    const configured = el('div');
    const stored = el('div');
    const form = el(
      'form',
      { class: 'grid' },
      el('label', { for: 'rule-scope' }, 'Scope'),
      el('select', { id: 'rule-scope', name: 'scope' }, el('option', { value: 'client' }, 'client'), el('option', { value: 'global' }, 'global')),
      el('label', { for: 'rule-client' }, 'Client id (client scope)'),
      el('input', { id: 'rule-client', name: 'clientId' }),
      el('label', { for: 'rule-path' }, 'API path'),
      el('input', { id: 'rule-path', name: 'apiPath', required: true, placeholder: '/openapi/v1/orders' }),
      RULE_FIELDS.flatMap((field) => [
        el('label', { for: `rule-${field}` }, field === 'cost' ? 'Cost' : `Per ${field}`),
        el('input', { id: `rule-${field}`, name: field, type: 'number', min: 0, step: 1, inputmode: 'numeric' }),
      ]),
      el('span'),
      el('button', { type: 'submit' }, 'Save rule'),
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      box.textContent = '';
      const data = new FormData(form);
      const rule = { scope: data.get('scope'), apiPath: String(data.get('apiPath')).trim() };
      if (rule.scope === 'client') rule.clientId = String(data.get('clientId')).trim();
      for (const field of RULE_FIELDS) if (String(data.get(field)) !== '') rule[field] = Number(data.get(field));
      try {
        await api('PUT', 'rules', rule);
        status.textContent = `Saved the rule of ${rule.apiPath}.`;
        await refresh();
      } catch (error) {
        showError(box, error);
      }
    });
    view.append(box, status, el('h2', {}, 'Configured (read-only)'), configured, el('h2', {}, 'Stored'), stored, el('section', { class: 'panel' }, el('h2', { id: 'rule-form' }, 'Add or change a stored rule'), form));

    const cell = (value) => el('td', {}, value === undefined ? '—' : number(value));
    const table = (list, editable) =>
      el(
        'table',
        {},
        el('thead', {}, el('tr', {}, ['Scope', 'Client', 'API path', 'Minute', 'Day', 'Month', 'Cost'].map((h) => el('th', { scope: 'col' }, h)), editable ? el('th', { scope: 'col' }, 'Change') : null)),
        el(
          'tbody',
          {},
          list.map((rule) =>
            el(
              'tr',
              {},
              el('td', {}, rule.scope),
              el('td', {}, rule.clientId ? el('code', {}, rule.clientId) : '—'),
              el('td', {}, el('code', {}, rule.apiPath)),
              RULE_FIELDS.map((field) => cell(rule[field])),
              editable
                ? el(
                    'td',
                    { class: 'row' },
                    el('button', { type: 'button', 'aria-label': `Edit the rule of ${rule.apiPath}`, onclick: () => edit(rule) }, 'Edit'),
                    action('Delete', box, async () => {
                      await api('DELETE', `rules?${query({ scope: rule.scope, api_path: rule.apiPath, client_id: rule.clientId })}`);
                      status.textContent = `Deleted the rule of ${rule.apiPath}.`;
                      await refresh();
                    }, { 'aria-label': `Delete the rule of ${rule.apiPath}` }),
                  )
                : null,
            ),
          ),
        ),
      );
    function edit(rule) {
      form.elements.scope.value = rule.scope;
      form.elements.clientId.value = rule.clientId || '';
      form.elements.apiPath.value = rule.apiPath;
      for (const field of RULE_FIELDS) form.elements[field].value = rule[field] === undefined ? '' : String(rule[field]);
      form.elements[RULE_FIELDS[0]].focus();
    }
    async function refresh() {
      const list = await api('GET', 'rules');
      const mine = list.filter((rule) => rule.source === 'store');
      const theirs = list.filter((rule) => rule.source === 'options');
      configured.replaceChildren(theirs.length ? table(theirs, false) : el('p', { class: 'muted' }, 'None.'));
      stored.replaceChildren(mine.length ? table(mine, true) : el('p', { class: 'muted' }, 'None yet.'));
    }
    await refresh();
  }

  // ---- routing -------------------------------------------------------------------------------

  function route() {
    const hash = location.hash.replace(/^#\/?/, '');
    const [first, ...rest] = hash.split('/');
    if (first === 'apps' && rest.length && PARTS.has('clients')) return (view) => application(view, decodeURIComponent(rest.join('/')));
    if (first === 'apps' && PARTS.has('clients')) return applications;
    if (first === 'rules' && PARTS.has('rules')) return rules;
    return overview;
  }

  async function render() {
    const mine = ++generation;
    charts.splice(0).forEach((c) => c.destroy());
    const view = el('div');
    screen.replaceChildren(view);
    for (const link of nav.querySelectorAll('a')) {
      link.hidden = Boolean(link.dataset.part) && !PARTS.has(link.dataset.part);
      const current = link.getAttribute('href') === `#/${location.hash.replace(/^#\/?/, '').split('/')[0]}`;
      if (current) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    try {
      await route()(view);
      if (mine !== generation) return;
      signIn.hidden = true;
      nav.hidden = false;
      signOut.hidden = !token();
      const title = view.querySelector('h1');
      if (title && document.activeElement === document.body) title.focus();
    } catch (error) {
      if (error instanceof SignInNeeded || mine !== generation) return;
      const box = alertBox();
      view.append(box);
      showError(box, error);
    }
  }

  window.addEventListener('hashchange', () => {
    render().then(() => screen.querySelector('h1')?.focus());
  });
  render();
})();
