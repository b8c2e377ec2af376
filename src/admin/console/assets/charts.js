/*
 * The operator console's figures (docs/operator.md#console): an endpoint's periods as bars
 * against their limits, and an application's history (GET {admin}/usage/history) as a uPlot
 * chart. A 404 from the history route is "No history", so the console works without it.
 */
'use strict';
// A global of the page, for console.js, which load after this one.
const consoleCharts = (() => {
  const { ApiError, api, apiPage, query, el, when, number, alertBox, action } = consoleKit;
  const HOUR = 3600e3;
  const DAY = 24 * HOUR;
  const charts = [];

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

  function endpointItem(endpoint) {
    return el('li', {}, el('div', { class: 'endpoint' }, el('code', {}, endpoint.api_path), el('span', { class: 'muted' }, ` ${endpoint.scope} rule, cost ${endpoint.cost}`)), endpoint.periods.map(periodBar));
  }

  /**
   * An application's endpoints in the current periods (GET {admin}/usage): its first page, and
   * "Show more endpoints" for each next one. Its users can make it thousands of endpoints
   * (docs/quota.md#which-endpoint-is-counted), too many to read or draw at once.
   */
  async function usageList(client) {
    const list = el('ul', { class: 'endpoints' });
    const count = el('p', { class: 'muted', role: 'status' });
    const box = alertBox();
    const next = action('Show more endpoints', box, () => more(true), { hidden: true, 'aria-label': `Show more endpoints of ${client.name || client.id}` });
    const row = el('div', { class: 'row more' }, count, next);
    let cursor;
    async function more(focusNew) {
      const page = await apiPage('usage', { client_id: client.id, cursor });
      const items = page.items.endpoints.map(endpointItem);
      list.append(...items);
      const paged = cursor !== undefined;
      cursor = page.next;
      next.hidden = cursor === null;
      const shown = list.children.length;
      count.textContent = cursor === null && !paged ? '' : `${number(shown)} ${shown === 1 ? 'endpoint' : 'endpoints'} listed${cursor === null ? '' : ', and more'}.`;
      row.hidden = !count.textContent;
      // The keyboard goes on from the first endpoint just added, not from a button that may now be hidden.
      if (focusNew && items.length) {
        items[0].tabIndex = -1;
        items[0].focus();
      }
    }
    await more(false);
    if (!list.children.length) return el('p', { class: 'muted' }, 'No calls in the current periods.');
    return el('div', {}, list, box, row);
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
    // `other` sums the endpoints the answer leaves out, so the chart counts every call.
    for (const series of [...(data.series || []), ...(data.other ? [data.other] : [])]) {
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

  /** Charts of the screen being left. */
  function destroyCharts() {
    charts.splice(0).forEach((chart) => chart.destroy());
  }

  return { STEPS, usageList, history, sumHistories, totals, chart, stepSwitch, destroyCharts };
})();
