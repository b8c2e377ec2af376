/*
 * The operator console's applications (docs/operator.md#console): the list with its cards and
 * the registration form (#/apps), and one application's page (#/apps/<id>): its usage, history,
 * status, secret, grants and deletion.
 */
'use strict';
// A global of the page, for console.js, which loads after this one.
const consoleApps = (() => {
  const { PARTS, PARALLEL, ApiError, SignInNeeded, api, apiPage, mapLimited, query, el, appLink, when, number, heading, alertBox, showError, action, secretPanel } = consoleKit;
  const { STEPS, usageList, history, chart, stepSwitch } = consoleCharts;
  /** Cards the applications screen adds at a time. */
  const CARDS_PAGE = 50;

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
    const [usage, used] = await Promise.all([PARTS.has('usage') ? usageList(client) : null, lastUse(client.id)]);
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
      usage,
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
    // A URL resolves `.` and `..` (as `%2E` too) before it is sent: such an id names no client.
    if (id === '.' || id === '..') throw new ApiError(404, `No client ${JSON.stringify(id)}`);
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
    if (PARTS.has('usage')) view.append(el('section', { class: 'panel' }, el('h2', {}, 'Current periods'), await usageList(client)));

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

  return { applications, application };
})();
