/*
 * The operator console (docs/operator.md#console): a small single-page app over the admin API,
 * built with consoleKit, consoleCharts and consoleApps. Hash routes: #/ overview, #/apps
 * applications (apps.js), #/apps/<id> one application (apps.js), #/rules rules.
 */
'use strict';
(() => {
  const { PARTS, PARALLEL, TOKEN_KEY, SignInNeeded, token, api, apiPage, mapLimited, query, showSignIn, el, appLink, when, number, heading, alertBox, showError, action } = consoleKit;
  const { STEPS, history, sumHistories, totals, chart, stepSwitch, destroyCharts } = consoleCharts;
  const { applications, application } = consoleApps;
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

  /** The admin API's largest page of applications, as the page says. */
  const LARGEST_PAGE = Number(document.body.dataset.clientPage);
  /** Applications the overview reads the history of: beyond, it says what it left out. */
  const OVERVIEW_MOST = 1000;

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

  /** The application id in the address; an escape the address bar garbled stays as written. */
  function idOf(text) {
    try {
      return decodeURIComponent(text);
    } catch {
      return text;
    }
  }

  function route() {
    const hash = location.hash.replace(/^#\/?/, '');
    const [first, ...rest] = hash.split('/');
    if (first === 'apps' && rest.length && PARTS.has('clients')) return (view) => application(view, idOf(rest.join('/')));
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
