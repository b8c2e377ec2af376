/*
 * The operator console (docs/operator.md#console): a small single-page app over the admin API,
 * built with consoleKit and consoleCharts. Hash routes: #/ overview, #/apps applications,
 * #/apps/<id> one application, #/rules rules.
 */
'use strict';
(() => {
  const { PARTS, TOKEN_KEY, SignInNeeded, token, api, apiPage, mapLimited, query, showSignIn, el, appLink, when, number, heading, alertBox, showError, action, secretPanel } = consoleKit;
  const { STEPS, usageList, history, sumHistories, totals, chart, stepSwitch, destroyCharts } = consoleCharts;
  const screen = document.getElementById('screen');
  const signIn = document.getElementById('sign-in');
  const nav = document.getElementById('nav');
  const signOut = document.getElementById('sign-out');
  let generation = 0;

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

  // ---- screens -------------------------------------------------------------------------------

  /** Applications a screen reads at once: as many as a browser has connections to one HTTP/1.1 origin. */
  const PARALLEL = 6;
  /** The admin API's largest page of applications, as the page says. */
  const LARGEST_PAGE = Number(document.body.dataset.clientPage);
  /** Applications the overview reads the history of: beyond, it says what it left out. */
  const OVERVIEW_MOST = 1000;
  /** Cards the applications screen adds at a time. */
  const CARDS_PAGE = 50;

  /** The applications in id order, page after page, up to `most`; `more` when some were left. */
  async function clientsUpTo(most, live) {
    const clients = [];
    let cursor;
    do {
      const page = await apiPage('clients', { limit: Math.min(LARGEST_PAGE, most - clients.length), cursor });
      clients.push(...page.items);
      cursor = page.next;
    } while (cursor && clients.length < most && live());
    return { clients, more: cursor !== null };
  }

  async function overview(view) {
    view.append(heading('Overview'));
    if (!PARTS.has('clients')) {
      view.append(el('p', {}, 'The OAuth server is off here, so there are no applications to show.'));
      return;
    }
    const { clients, more } = await clientsUpTo(OVERVIEW_MOST, () => view.isConnected);
    const box = alertBox();
    const scope = el('p', { class: 'muted' });
    if (more) {
      scope.textContent = `Summed over the first ${number(clients.length)} applications in id order, and the busiest of those: there are more, which these figures leave out. Each application's own figures are on its page.`;
    } else {
      scope.textContent = clients.length > 1 ? `Summed over all ${number(clients.length)} applications.` : clients.length ? 'Summed over the one application.' : 'No applications yet.';
    }
    const area = el('div', { class: 'panel' });
    const top = el('div', { class: 'panel' });
    view.append(box, el('h2', {}, 'Calls and 429s'), scope, stepSwitch(draw), area, top);
    let drawing = 0;
    async function draw(step) {
      const mine = ++drawing;
      const live = () => mine === drawing && view.isConnected;
      area.replaceChildren(el('p', { class: 'muted', role: 'status' }, `Reading the history of ${number(clients.length)} applications…`));
      try {
        const histories = await mapLimited(clients, PARALLEL, (client) => history(client.id, step), live);
        if (!live()) return;
        chart(area, sumHistories(histories), `All applications, ${STEPS[step].label.toLowerCase()}`);
        ranking(histories, step);
      } catch (error) {
        if (live()) showError(box, error);
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
          { class: 'data' },
          el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Application'), el('th', { scope: 'col' }, 'Calls'), el('th', { scope: 'col' }, '429s'))),
          el('tbody', {}, rows.map((row) => el('tr', {}, el('td', {}, appLink(row.client)), el('td', { 'data-label': 'Calls' }, number(row.sum.admitted)), el('td', { 'data-label': '429s' }, number(row.sum.rejected))))),
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
        await onRegistered(result);
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

  async function card(client) {
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
  }

  async function applications(view) {
    view.append(heading('Applications'));
    const notice = el('div');
    const box = alertBox();
    const filter = el(
      'select',
      { id: 'app-status', name: 'status' },
      el('option', { value: '' }, 'All'),
      el('option', { value: 'active' }, 'Active'),
      el('option', { value: 'suspended' }, 'Suspended'),
    );
    const list = el('div', { class: 'cards' });
    const count = el('p', { class: 'muted', role: 'status' });
    const next = action('Show more applications', box, () => more(true), { hidden: true });
    view.append(
      notice,
      registerForm(async (result) => {
        const note = result.client_secret ? 'Shown this once: copy it now. Only its hash is kept.' : 'A public client: it has no secret.';
        notice.replaceChildren(result.client_secret ? secretPanel(`Secret of ${result.client.name}`, result.client_secret, note) : el('p', { role: 'status' }, note));
        await restart();
        // In id order the new application may be pages away: it is shown first until its page comes.
        if (!shown.has(result.client.id) && (!filter.value || filter.value === result.client.status)) {
          shown.add(result.client.id);
          list.prepend(await card(result.client));
        }
      }),
      el('div', { class: 'inline' }, el('label', { for: 'app-status' }, 'Status'), filter),
      box,
      list,
      count,
      next,
    );
    filter.addEventListener('change', () =>
      restart().catch((error) => {
        if (!(error instanceof SignInNeeded)) showError(box, error);
      }),
    );

    // The listing being shown: a new filter or a registration starts another, and the old one's pages are dropped.
    let listing = 0;
    let cursor;
    let shown = new Set();
    async function restart() {
      listing++;
      cursor = undefined;
      shown = new Set();
      list.replaceChildren();
      next.hidden = true;
      count.textContent = '';
      box.textContent = '';
      await more(false);
    }
    async function more(focusNew) {
      const mine = listing;
      const live = () => mine === listing && view.isConnected;
      const page = await apiPage('clients', { limit: CARDS_PAGE, cursor, status: filter.value });
      const fresh = page.items.filter((client) => !shown.has(client.id));
      const cards = await mapLimited(fresh, PARALLEL, card, live);
      if (!live()) return;
      fresh.forEach((client) => shown.add(client.id));
      list.append(...cards);
      cursor = page.next;
      next.hidden = cursor === null;
      if (!shown.size) list.replaceChildren(el('p', {}, filter.value ? `No ${filter.value} applications.` : 'No applications yet.'));
      count.textContent = `${number(shown.size)} ${shown.size === 1 ? 'application' : 'applications'} shown${cursor === null ? '' : ', and more'}.`;
      if (focusNew && cards.length) cards[0].querySelector('a').focus();
    }
    await restart();
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
      if (client.previous_valid_until) rows.push(['Previous secret works until', when(client.previous_valid_until)]);
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

    const cell = (label, value) => el('td', { 'data-label': label }, value === undefined ? '—' : value);
    const table = (list, editable) =>
      el(
        'table',
        { class: 'data' },
        el('thead', {}, el('tr', {}, ['Scope', 'Client', 'API path', 'Minute', 'Day', 'Month', 'Cost'].map((h) => el('th', { scope: 'col' }, h)), editable ? el('th', { scope: 'col' }, 'Change') : null)),
        el(
          'tbody',
          {},
          list.map((rule) =>
            el(
              'tr',
              {},
              cell('Scope', rule.scope),
              cell('Client', rule.clientId && el('code', {}, rule.clientId)),
              cell('API path', el('code', {}, rule.apiPath)),
              RULE_FIELDS.map((field) => cell(field[0].toUpperCase() + field.slice(1), rule[field] === undefined ? undefined : number(rule[field]))),
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
    destroyCharts();
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
