// The orderless console: a static page over the console's JSON. Everything shown from documents and messages is
// set as text (el() below makes elements and text nodes; nothing here assigns markup), so an entity id or a reason
// holding "<img onerror=...>" is shown as those characters. Ids go through idText() (every character outside
// printable ASCII shown escaped, so a look-alike or a bidirectional control cannot pass for another id), free text
// through freeText() (control, bidirectional and zero-width characters shown escaped); nothing else shows them.
'use strict';

(function () {
  const REFRESH_MS = 2000;         // the overview's and the fleet's poll, after the last answer came
  const BANNER_MS = 5000;          // the banner's poll, after the last answer came
  const KEEP_MS = 5 * 60 * 1000;   // the chart's window: the last five minutes since the page opened
  const PAGE_SIZE = 50;
  const FILTERS = ['queue', 'kind', 'reason', 'entity', 'minAgeSeconds', 'maxAgeSeconds', 'status'];
  const STATUSES = ['dead', 'parked', 'replayed', 'purged', 'all'];
  let session = { canAct: false, csrf: null, actionHeader: 'X-Orderless-Console' };
  // The current route: its number, and the controller that aborts its reads when another route starts. Every answer
  // is checked against it before it is shown, so a slow answer of an earlier route never replaces the current page.
  let current = { number: 0, controller: new AbortController() };
  let timer = null;
  let dropped = 0;      // answers that came for an earlier route and were dropped (data-dropped on <body>)
  const samples = [];   // {time, rates: {series: msgs/s}, lags: {view: s}}
  let last = null;      // the previous overview, to turn counters into rates

  /** Thrown by a read whose route is no longer the current one: nothing is shown, nothing is said. */
  class Stale extends Error {}

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === 'onclick' || name === 'onsubmit' || name === 'onchange') node[name] = value;
      else node.setAttribute(name, value === true ? '' : String(value));
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function svg(tag, attrs) {
    const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, String(value));
    return node;
  }

  // ---- showing ids and free text -------------------------------------------------------------------------------

  function hex(unit) {
    return '\\u' + unit.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
  }

  // an id: every UTF-16 unit outside printable ASCII is escaped ("sс1" with a Cyrillic с reads s\u04411)
  function outsideAscii(unit) {
    return unit < ' ' || unit > '~';
  }

  // free text keeps its letters, whatever the script, but shows what is invisible or reorders what follows it
  const INVISIBLE = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u200B-\u200F\u202A-\u202E\u2066-\u2069\uFEFF]/;

  function escapeInto(node, text, escaped) {
    let plain = '';
    for (let i = 0; i < text.length; i++) {
      const unit = text[i];
      if (!escaped(unit)) { plain += unit; continue; }
      if (plain) node.append(document.createTextNode(plain));
      plain = '';
      node.append(el('span', { class: 'esc', title: 'U+' + hex(unit).slice(2) }, hex(unit)));
    }
    if (plain) node.append(document.createTextNode(plain));
    return node;
  }

  /** An id (entity, queue, kind, letter, instance, view): a span.id, non-ASCII escaped visibly. */
  function idText(value) {
    if (value === null || value === undefined) return '—';
    return escapeInto(el('span', { class: 'id' }), String(value), outsideAscii);
  }

  /** An id as a plain string, for places that take no elements (the chart's SVG text). */
  function idString(value) {
    return Array.from(String(value), unit => outsideAscii(unit) ? hex(unit) : unit).join('');
  }

  /** Free text (a reason, a body, a document, an error): a span.text, control/bidi/zero-width escaped visibly. */
  function freeText(value) {
    if (value === null || value === undefined) return '—';
    return escapeInto(el('span', { class: 'text' }), String(value), unit => INVISIBLE.test(unit));
  }

  // ---- the status line, loading and reads ----------------------------------------------------------------------

  function status(text, kind) {
    const line = document.getElementById('status');
    line.replaceChildren();
    if (text) line.append(freeText(text));
    line.className = 'status' + (kind ? ' ' + kind : '');
  }

  function loading(text) {
    const line = document.getElementById('loading');
    line.textContent = text || '';
    line.hidden = !text;
  }

  function live(ctx) {
    return ctx === current;
  }

  function stale() {
    dropped++;
    document.body.setAttribute('data-dropped', String(dropped));
    return new Stale('an answer for an earlier page');
  }

  // A read for route ctx (aborted when another route starts, and refused if it answers after), or for nothing (ctx
  // null: the banner, which belongs to every page).
  async function api(path, ctx, options) {
    let response;
    try {
      response = await fetch('api/' + path, Object.assign({ credentials: 'same-origin',
        headers: { 'Accept': 'application/json' }, signal: ctx ? ctx.controller.signal : undefined }, options || {}));
    } catch (e) {
      if (ctx && !live(ctx)) throw stale();
      throw new Error('the console did not answer ' + path.split('?')[0] + ' (' + e.message
        + '): check that the application is up');
    }
    let body = null;
    try { body = await response.json(); } catch (e) { body = null; }
    if (ctx && !live(ctx)) throw stale();
    if (!response.ok) {
      throw new Error(body && body.error ? body.error : 'HTTP ' + response.status + ' from ' + path.split('?')[0]);
    }
    return body;
  }

  // An action is not aborted by leaving the page (the server may have acted already); its result is shown only on
  // the page that asked for it.
  async function act(path, body) {
    const headers = { 'Accept': 'application/json' };
    headers[session.actionHeader] = '1';
    if (session.csrf) headers[session.csrf.header] = session.csrf.token;
    const options = { method: 'POST', headers: headers };
    if (body !== undefined) {
      headers['Content-Type'] = 'text/plain; charset=utf-8';
      options.body = body;
    }
    return api(path, null, options);
  }

  /** Shows the route's page, unless another route started meanwhile (then the answer is dropped). */
  function page(ctx, ...children) {
    if (!live(ctx)) throw stale();
    const section = document.getElementById('page');
    section.replaceChildren(...children.flat(Infinity).filter(child => child !== null && child !== undefined));
    loading('');
  }

  function stateCell(state) {
    return el('td', { class: 'state state-' + state }, state);
  }

  function show(value) {
    return value === null || value === undefined ? '—' : value;
  }

  function age(seconds) {
    if (seconds === null || seconds === undefined) return '—';
    const s = Math.max(0, Math.round(seconds));
    if (s < 60) return s + ' s';
    if (s < 3600) return Math.floor(s / 60) + ' min ' + (s % 60) + ' s';
    if (s < 86400) return Math.floor(s / 3600) + ' h ' + Math.floor((s % 3600) / 60) + ' min';
    return Math.floor(s / 86400) + ' d ' + Math.floor((s % 86400) / 3600) + ' h';
  }

  function entityLink(id) {
    return id === null || id === undefined ? '—'
      : el('a', { href: '#/entity/' + encodeURIComponent(id), class: 'entity' }, idText(id));
  }

  function table(attrs, headings, rows) {
    return el('table', attrs, el('tr', {}, headings.map(h => el('th', {}, h))), rows);
  }

  // ---- overview ------------------------------------------------------------------------------------------------

  function rate(now, before, seconds, field) {
    if (!before || seconds <= 0 || now[field] === undefined || now[field] === null
      || before[field] === undefined || before[field] === null) return undefined;
    return Math.max(0, (now[field] - before[field]) / seconds);
  }

  // handled/s and dead-lettered/s per queue, from the consumers' counters between two overviews
  function record(overview) {
    const rates = {}, handled = {}, dead = {};
    if (last) {
      const seconds = (overview.time - last.time) / 1000;
      for (const consumer of overview.consumers) {
        const before = last.consumers.find(c => c.queue === consumer.queue);
        const h = rate(consumer, before, seconds, 'handled');
        const d = rate(consumer, before, seconds, 'deadLettered');
        if (h !== undefined) { handled[consumer.queue] = h; rates[idString(consumer.queue) + ' handled'] = h; }
        if (d !== undefined) { dead[consumer.queue] = d; rates[idString(consumer.queue) + ' dead-lettered'] = d; }
      }
    }
    const lags = {};
    for (const feeder of overview.feeders) {
      if (feeder.lagSeconds !== null && feeder.lagSeconds !== undefined) lags[idString(feeder.view)] = feeder.lagSeconds;
    }
    samples.push({ time: overview.time, rates: rates, lags: lags });
    while (samples.length && samples[0].time < overview.time - KEEP_MS) samples.shift();
    last = overview;
    return { handled: handled, dead: dead };
  }

  function chart(title, id, pick) {
    const width = 560, pad = 28, legendWidth = 180, perRow = Math.floor((width - pad) / legendWidth);
    const names = [...new Set(samples.flatMap(s => Object.keys(pick(s))))];
    const rows = Math.max(1, Math.ceil(names.length / perRow));
    const plot = 112, height = plot + 14 * rows + 8;
    const figure = svg('svg', { width: width, height: height, class: 'chart', id: id, role: 'img' });
    const label = svg('text', { x: pad, y: 14 });
    label.textContent = title;
    figure.append(label);
    if (!samples.length) return figure;
    const t0 = samples[0].time, t1 = Math.max(samples[samples.length - 1].time, t0 + 1);
    let top = 0;
    samples.forEach(s => Object.values(pick(s)).forEach(v => { top = Math.max(top, v); }));
    top = top > 0 ? top * 1.1 : 1;
    figure.append(svg('line', { x1: pad, y1: plot, x2: width - 4, y2: plot, class: 'axis' }));
    const max = svg('text', { x: 2, y: pad });
    max.textContent = top.toFixed(top < 10 ? 1 : 0);
    figure.append(max);
    names.forEach((name, i) => {
      const points = samples.filter(s => pick(s)[name] !== undefined).map(s => {
        const x = pad + (s.time - t0) / (t1 - t0) * (width - pad - 4);
        const y = plot - pick(s)[name] / top * (plot - pad);
        return x.toFixed(1) + ',' + y.toFixed(1);
      });
      const kind = name.endsWith(' dead-lettered') ? ' dead' : '';
      figure.append(svg('polyline', { points: points.join(' '), class: 'series-' + (i % 3) + kind,
        'data-series': name }));
      const legend = svg('text', { x: pad + legendWidth * (i % perRow), y: plot + 14 * (Math.floor(i / perRow) + 1),
        class: 'series-' + (i % 3) });
      legend.textContent = name;
      figure.append(legend);
    });
    return figure;
  }

  function consumerRows(consumers, rates, instance) {
    return consumers.map(c => el('tr', { 'data-queue': c.queue, 'data-instance': instance },
      el('td', {}, idText(c.queue)), stateCell(c.state),
      rates ? el('td', { class: 'rate' }, rates.handled[c.queue] === undefined ? '…' : rates.handled[c.queue].toFixed(1))
        : null,
      rates ? el('td', { class: 'dead-rate' }, rates.dead[c.queue] === undefined ? '…' : rates.dead[c.queue].toFixed(1))
        : null,
      el('td', {}, show(c.retrying)), el('td', { class: 'waiting' }, freeText(c.waitingFor)),
      el('td', { class: 'handled' }, show(c.handled)),
      el('td', { class: 'dead-lettered' },
        el('a', { href: '#/dead-letters?queue=' + encodeURIComponent(c.queue) }, show(c.deadLettered)))));
  }

  function consumersTable(id, consumers, rates, instance) {
    const headings = ['queue', 'state'].concat(rates ? ['handled/s', 'dead-lettered/s'] : [])
      .concat(['retrying', 'waiting for', 'handled', 'dead-lettered']);
    return consumers.length ? table({ id: id, class: 'consumers' }, headings, consumerRows(consumers, rates, instance))
      : el('p', { class: 'muted' }, 'No consumer.');
  }

  function feedersTable(id, feeders) {
    return feeders.length ? table({ id: id, class: 'feeders' },
      ['view', 'state', 'lag (s)', 'segments', 'lease holders', 'dead-lettered', 'failure'],
      feeders.map(f => el('tr', { 'data-view': f.view },
        el('td', {}, idText(f.view)), stateCell(f.state),
        el('td', {}, f.lagSeconds === null || f.lagSeconds === undefined ? '—' : f.lagSeconds.toFixed(2)),
        el('td', {}, f.segmentCount === undefined ? '—'
          : Object.keys(f.segments || {}).length + ' of ' + f.segmentCount + ' fed here'),
        el('td', {}, f.holders ? Object.entries(f.holders).map(([r, h]) => [idText(r), ': ', idText(h), ' ']) : '—'),
        el('td', {}, show(f.deadLettered)), el('td', {}, freeText(f.failure)))))
      : el('p', { class: 'muted' }, 'No view feeder.');
  }

  function outboxTable(id, outbox) {
    return table({ id: id, class: 'outbox' }, ['state', 'backlog', 'oldest (s)', 'parked', 'published', 'problem'],
      el('tr', {}, stateCell(outbox.state), el('td', {}, outbox.backlog), el('td', {}, show(outbox.oldestSeconds)),
        el('td', {}, outbox.parked), el('td', {}, outbox.published), el('td', {}, freeText(outbox.problem))));
  }

  function passesTable(id, passes) {
    return table({ id: id, class: 'passes' }, ['pass', 'state', 'passes', 'failures', 'last failure'],
      passes.map(p => el('tr', { 'data-pass': p.name }, el('td', {}, idText(p.name)), stateCell(p.state),
        el('td', {}, p.passes), el('td', {}, p.failures), el('td', {}, freeText(p.lastFailure)))));
  }

  function backlogTable(queues) {
    return table({ id: 'backlog' }, ['work queue', 'ready', 'unacked', 'consumers', 'dead-letter queue',
      'in it', 'letters (dead)', 'parked', 'problem'],
    queues.map(q => el('tr', { 'data-queue': q.queue },
      el('td', {}, idText(q.queue)), el('td', { class: 'ready' }, show(q.ready)),
      el('td', { class: 'unacked', title: q.unacked === null ? 'needs orderless.console.management-url' : null },
        show(q.unacked)),
      el('td', { class: 'attached' }, show(q.consumers)), el('td', {}, idText(q.deadLetterQueue)),
      el('td', { class: 'dlq-ready' }, show(q.deadLetterReady)),
      el('td', { class: 'letters' }, el('a', { href: '#/dead-letters?queue=' + encodeURIComponent(q.queue) },
        show(q.letters))),
      el('td', { class: 'parked' }, el('a', { href: '#/parked?queue=' + encodeURIComponent(q.queue) },
        show(q.parked))),
      // why a figure is missing (the broker, its management API or MongoDB did not answer), never a bare '—'
      el('td', { class: 'backlog-problem' }, [q.error, q.unackedError, q.lettersError]
        .filter(why => why !== null && why !== undefined).map((why, i) => [i ? '; ' : '', freeText(why)])))));
  }

  async function overview(ctx) {
    const o = await api('overview', ctx);
    const rates = record(o);
    const parts = [];
    if (o.instance) {
      parts.push(el('p', { class: 'muted', id: 'instance' }, 'This instance: ', idText(o.instance.id), ' on ',
        idText(o.instance.host), ', pid ', show(o.instance.pid), ', started ', show(o.instance.started), ' · ',
        el('a', { href: '#/fleet' }, 'the whole fleet')));
    }
    if (o.queues) {
      parts.push(el('h2', {}, 'Backlog'), o.queues.length ? backlogTable(o.queues)
        : el('p', { class: 'muted' }, 'No work queue here.'));
    }
    parts.push(el('h2', {}, 'Consumers'), consumersTable('consumers', o.consumers, rates, null),
      el('h2', {}, 'View feeders'), feedersTable('feeders', o.feeders));
    if (o.outbox) parts.push(el('h2', {}, 'Outbox'), outboxTable('outbox', o.outbox));
    if (o.passes.length) parts.push(el('h2', {}, 'Passes'), passesTable('passes', o.passes));
    parts.push(el('h2', {}, 'Last minutes'),
      chart('messages/s by queue: handled, dead-lettered (dashed)', 'chart-rates', s => s.rates), ' ',
      chart('view lag (s)', 'chart-lag', s => s.lags));
    page(ctx, parts);
  }

  // ---- the fleet -----------------------------------------------------------------------------------------------

  async function fleet(ctx) {
    const f = await api('fleet', ctx);
    const parts = [el('h2', {}, 'Instances'),
      el('p', { class: 'muted' }, 'Each instance reports every ', show(f.interval), '; one silent for three reports is'
        + ' shown GONE, one that said goodbye STOPPED. Instances that reported within a day are listed.'),
      f.instances.length ? table({ id: 'instances' }, ['instance', 'host', 'pid', 'started', 'last report',
        'silent for', 'state', 'consumers'],
      f.instances.map(i => el('tr', { 'data-instance': i.id },
        el('td', {}, el('a', { href: '#instance-' + encodeURIComponent(i.id), class: 'instance' }, idText(i.id))),
        el('td', {}, idText(i.host)), el('td', {}, show(i.pid)), el('td', {}, show(i.started)),
        el('td', {}, show(i.reportedAt)), el('td', { class: 'silent' }, age(i.silentSeconds)), stateCell(i.state),
        el('td', {}, i.consumers.length))))
        : el('p', { class: 'muted' }, 'No instance reported within a day.')];
    for (const i of f.instances) {
      parts.push(el('section', { class: 'instance', 'data-instance': i.id },
        el('h2', {}, 'Instance ', idText(i.id), ' on ', idText(i.host), ' ', el('span', { class: 'state state-' + i.state },
          i.state)),
        el('h3', {}, 'Consumers'), consumersTable(null, i.consumers, null, i.id),
        i.feeders.length ? [el('h3', {}, 'View feeders'), feedersTable(null, i.feeders)] : null,
        i.passes.length ? [el('h3', {}, 'Passes'), passesTable(null, i.passes)] : null,
        i.outbox ? [el('h3', {}, 'Outbox'), outboxTable(null, i.outbox)] : null));
    }
    page(ctx, parts);
  }

  // ---- actions -------------------------------------------------------------------------------------------------

  function confirmThen(question, run) {
    const bar = el('div', { id: 'confirm', class: 'status' }, question, ' ',
      el('button', { id: 'confirm-yes', class: 'danger', onclick: async () => { bar.remove(); await run(); } }, 'Confirm'),
      el('button', { id: 'confirm-no', onclick: () => bar.remove() }, 'Cancel'));
    const old = document.getElementById('confirm');
    if (old) old.remove();
    document.getElementById('page').prepend(bar);
  }

  const VERBS = { replay: 'Replay', park: 'Park', unpark: 'Un-park', purge: 'Purge' };
  const WARNINGS = {
    replay: ' They go back to the work queue.',
    park: ' Parked letters are kept, out of replay-all\'s way.',
    unpark: ' They become dead letters again.',
    purge: ' Purged letters lose their body for good.'
  };

  // A button that asks first, then acts, shows the result line and refreshes the page it is on.
  function actionButton(ctx, label, verb, query, question, refresh, extra) {
    return el('button', Object.assign({ 'data-action': verb, class: verb === 'purge' ? 'danger' : null,
      disabled: !session.canAct, title: session.canAct ? null : 'needs the role ' + session.actionRole,
      onclick: () => confirmThen(el('span', {}, question, WARNINGS[verb] || ''), () => perform(ctx,
        () => act('letters/' + verb + '?' + query), refresh)) }, extra || {}), label);
  }

  async function perform(ctx, run, refresh) {
    let done = null;
    try {
      done = await run();
    } catch (e) {
      if (live(ctx)) status(e.message, 'error');
    }
    if (!live(ctx)) return;
    if (done) status(done.result + (done.audit ? ' · on record as audit entry ' + done.audit : ''), 'result');
    try { await refresh(); } catch (e) { if (!(e instanceof Stale)) status(e.message, 'error'); }
  }

  function readOnlyNote() {
    return session.canAct ? null : el('p', { class: 'muted', id: 'read-only' },
      'Read-only: replaying, editing, parking, un-parking and purging need the role ' + session.actionRole + '.');
  }

  // ---- dead letters --------------------------------------------------------------------------------------------

  function filtersOf(params, fixedStatus) {
    const filters = {};
    for (const name of FILTERS) {
      const value = params.get(name);
      if (value !== null && value.trim() !== '') filters[name] = value.trim();
    }
    if (fixedStatus) filters.status = fixedStatus;
    return filters;
  }

  function query(filters) {
    return Object.entries(filters).map(([n, v]) => n + '=' + encodeURIComponent(v)).join('&');
  }

  function describe(filters) {
    const said = Object.entries(filters).filter(([n]) => n !== 'status');
    return [said.length ? ['matching ', said.map(([n, v], i) => [i ? ', ' : '', n + ' ', idText(v)])]
      : 'of every queue and kind', ' (status ', filters.status || 'dead', ')'];
  }

  // a group's reason as a search: a reason cut short ends in '...', which the letters' reasons do not hold
  function searchable(reason) {
    return String(reason).replace(/(\.\.\.|…)$/, '');
  }

  function groupsOf(ctx, g, refresh) {
    const parts = [];
    for (const q of g.queues) {
      parts.push(el('h2', {}, 'Dead letters of ', idText(q.queue)),
        el('p', { class: 'muted' }, show(q.dead), ' dead, ', el('a', { href: '#/parked?queue='
          + encodeURIComponent(q.queue) }, show(q.parked), ' parked'), ', moved into MongoDB from ',
        idText(q.deadLetterQueue), '.'));
      if (!q.groups.length) { parts.push(el('p', { class: 'muted no-letters' }, 'No dead letters.')); continue; }
      const rows = [];
      const kinds = Object.entries(q.kinds || {}).sort((a, b) => b[1] - a[1]);
      for (const [kind, count] of kinds) {
        const filters = { queue: q.queue, kind: kind, status: 'dead' };
        const what = ['the ', count, ' dead letter(s) of kind ', idText(kind), ' on ', idText(q.queue), ', whatever'
          + ' their reason?'];
        rows.push(el('tr', { class: 'kind', 'data-kind': kind },
          el('th', {}, idText(kind)), el('th', { class: 'count' }, count), el('th', { colspan: 3 },
            el('a', { href: '#/dead-letters?' + query({ queue: q.queue, kind: kind }), 'data-letters': kind },
              'show these letters')),
          el('th', {}, ['replay', 'park', 'purge'].map(verb => actionButton(ctx, VERBS[verb] + ' all', verb,
            query(Object.assign({}, filters, { max: count })), [VERBS[verb] + ' ', what], refresh)))));
        for (const group of q.groups.filter(group => group.kind === kind)) {
          rows.push(el('tr', { class: 'group', 'data-kind': group.kind },
            el('td', {}, ''), el('td', { class: 'count' }, group.count),
            el('td', { class: 'reason' }, el('a', { href: '#/dead-letters?' + query({ queue: q.queue, kind: group.kind,
              reason: searchable(group.reason) }) }, freeText(group.reason))),
            el('td', { class: 'entities' }, group.entities.map(e => [entityLink(e), ' '])),
            el('td', { class: 'ages' }, 'oldest ', age(group.oldestSeconds), ', newest ', age(group.newestSeconds)),
            el('td', {}, '')));
        }
      }
      parts.push(table({ class: 'groups', 'data-queue': q.queue },
        ['kind', 'letters', 'reason', 'sample entities', 'age', ''], rows));
    }
    if (g.replayGrace) parts.push(el('p', { class: 'muted' }, 'A replay refuses letters older than ' + g.replayGrace
      + ' (the tombstone grace): replaying them could resurrect what was removed.'));
    return parts;
  }

  function filterForm(filters, fixedStatus) {
    const input = (name, label, size) => [el('label', { for: 'filter-' + name }, label),
      el('input', { id: 'filter-' + name, name: name, value: filters[name] || '', size: size || 12 })];
    const statusSelect = fixedStatus ? null : [el('label', { for: 'filter-status' }, 'status'),
      el('select', { id: 'filter-status', name: 'status' }, STATUSES.map(s => el('option',
        { value: s, selected: (filters.status || 'dead') === s }, s)))];
    return el('form', { class: 'filters', id: 'letter-filters', onsubmit: (event) => {
      event.preventDefault();
      const chosen = {};
      for (const name of FILTERS) {
        const field = document.getElementById('filter-' + name);
        if (field && field.value.trim() !== '' && !(name === 'status' && field.value === 'dead')) {
          chosen[name] = field.value.trim();
        }
      }
      const target = '#/' + (fixedStatus ? 'parked' : 'dead-letters') + (Object.keys(chosen).length ? '?'
        + query(chosen) : '');
      if (location.hash === target) route(); else location.hash = target;
    } }, input('queue', 'queue'), input('kind', 'kind'), input('reason', 'reason contains', 16),
    input('entity', 'entity', 16), input('minAgeSeconds', 'older than (s)', 6), input('maxAgeSeconds',
      'younger than (s)', 6), statusSelect, el('button', { type: 'submit', id: 'filter-apply' }, 'Search'));
  }

  function letterRow(l) {
    return el('tr', { 'data-letter': l.id, 'data-entity': l.entity, 'data-status': l.status },
      el('td', {}, el('a', { href: '#/letter/' + encodeURIComponent(l.id), class: 'open' }, idText(l.id))),
      el('td', {}, age(l.ageSeconds)), el('td', {}, idText(l.queue)), el('td', {}, idText(l.kind)),
      el('td', { class: 'reason' }, freeText(l.reason)), el('td', {}, entityLink(l.entity)), el('td', {}, show(l.seq)),
      el('td', {}, l.replays), el('td', { class: 'letter-status' }, l.status));
  }

  // the letters matching filters, newest first, a page at a time (next: the server's cursor)
  function lettersTable(ctx, filters, first) {
    const body = el('tbody', {}, first.letters.map(letterRow));
    const shown = el('span', { id: 'letters-shown' }, String(first.letters.length));
    const more = el('p', { class: 'more' });
    const nextPage = (cursor) => {
      more.replaceChildren();
      if (!cursor) return;
      more.append(el('button', { id: 'more', onclick: async (event) => {
        const button = event.currentTarget;
        if (button.disabled) return;
        button.disabled = true;   // one read of the next page: a second click would list it twice
        try {
          const next = await api('letters?' + query(Object.assign({}, filters, { after: cursor, limit: PAGE_SIZE })), ctx);
          if (!live(ctx)) throw stale();
          body.append(...next.letters.map(letterRow));
          shown.textContent = String(body.children.length);
          nextPage(next.next);
        } catch (e) {
          button.disabled = false;   // to try again
          if (!(e instanceof Stale)) status(e.message, 'error');
        }
      } }, 'Show the next ' + PAGE_SIZE));
    };
    nextPage(first.next);
    return [el('p', { id: 'letters-total' }, el('strong', {}, String(first.total)), ' letter(s) ', describe(filters),
      '; showing ', shown, ', newest first.'),
    first.total ? el('table', { id: 'letters' }, el('thead', {}, el('tr', {}, ['letter', 'age', 'queue', 'kind', 'reason',
      'entity', 'seq', 'replays', 'status'].map(h => el('th', {}, h)))), body)
      : el('p', { class: 'muted', id: 'no-match' }, 'No letter matches.'),
    more];
  }

  function matchingActions(ctx, filters, total, verbs, refresh) {
    if (!total) return null;
    // max: the letters counted, oldest first, as the action takes them; one arriving (or growing old enough for an
    // age filter) between the listing and the confirmation is left for the next look, never taken unconfirmed
    return el('p', { class: 'matching-actions' }, verbs.map(verb => actionButton(ctx, VERBS[verb] + ' the ' + total
      + ' matching', verb, query(Object.assign({}, filters, { max: total })), [VERBS[verb] + ' all ', String(total),
      ' letter(s) ', describe(filters), '?'],
    refresh, { 'data-matching': verb })));
  }

  async function deadLetters(ctx, params) {
    const filters = filtersOf(params, null);
    const listed = Object.assign({ status: 'dead' }, filters);
    const refresh = () => deadLetters(ctx, params);
    const [g, first] = await Promise.all([api('letters/groups', ctx),
      api('letters?' + query(Object.assign({}, listed, { limit: PAGE_SIZE })), ctx)]);
    const verbs = listed.status === 'dead' ? ['replay', 'park', 'purge'] : listed.status === 'parked'
      ? ['unpark', 'replay', 'purge'] : [];
    page(ctx, groupsOf(ctx, g, refresh), el('h2', { id: 'search' }, 'Letters'), filterForm(filters, null),
      lettersTable(ctx, listed, first), matchingActions(ctx, listed, first.total, verbs, refresh), readOnlyNote());
  }

  async function parked(ctx, params) {
    const filters = filtersOf(params, 'parked');
    const refresh = () => parked(ctx, params);
    const first = await api('letters?' + query(Object.assign({}, filters, { limit: PAGE_SIZE })), ctx);
    page(ctx, el('h2', {}, 'Parked letters'),
      el('p', { class: 'muted' }, 'Parked letters are kept and left out of replay-all; un-park them to make them dead'
        + ' letters again.'),
      filterForm(filters, 'parked'), lettersTable(ctx, filters, first),
      matchingActions(ctx, filters, first.total, ['unpark', 'purge'], refresh), readOnlyNote());
  }

  // ---- one letter ----------------------------------------------------------------------------------------------

  function auditTable(id, entries) {
    return entries.length ? table({ id: id, class: 'audit' }, ['when', 'who', 'instance', 'action', 'queue',
      'selection', 'letters', 'outcome'],
    entries.map(a => el('tr', { 'data-audit': a.id, 'data-action': a.action, class: a.ok ? 'ok' : 'failed' },
      el('td', {}, show(a.at)), el('td', {}, idText(a.user)), el('td', {}, idText(a.instance)),
      el('td', { class: 'action' }, idText(a.action)), el('td', {}, idText(a.queue)),
      el('td', { class: 'selection' }, freeText(a.selection), (a.ids || []).length && a.ids.length <= 3
        ? [' (', a.ids.map((id, i) => [i ? ', ' : '', el('a', { href: '#/letter/' + encodeURIComponent(id) }, 'open')]),
          ')'] : null),
      el('td', { class: 'count' }, show(a.count)),
      el('td', { class: 'outcome' }, freeText(a.outcome)))))
      : el('p', { class: 'muted no-audit' }, 'No action on record.');
  }

  async function letter(ctx, id) {
    const l = await api('letters/one?id=' + encodeURIComponent(id), ctx);
    const refresh = () => letter(ctx, id);
    const open = l.status === 'dead' || l.status === 'parked';
    const ids = 'ids=' + encodeURIComponent(l.id);
    const verbs = l.status === 'dead' ? ['replay', 'park', 'purge'] : l.status === 'parked' ? ['unpark', 'replay', 'purge']
      : [];
    const editor = el('div', { id: 'editor', hidden: true },
      el('label', { for: 'edit-body' }, 'The message to send instead (checked as an orderless message first):'),
      el('textarea', { id: 'edit-body', rows: 8, spellcheck: 'false' }),
      el('button', { id: 'edit-send', 'data-action': 'edit-replay', disabled: !session.canAct,
        onclick: () => {
          const edited = document.getElementById('edit-body').value;
          confirmThen(el('span', {}, 'Send the edited message to ', idText(l.queue), ' instead of letter ', idText(l.id),
            '?'), () => perform(ctx, () => act('letters/edit-replay?id=' + encodeURIComponent(l.id), edited), refresh));
        } }, 'Replay the edited message'),
      el('button', { id: 'edit-cancel', onclick: () => { editor.hidden = true; } }, 'Cancel'));
    const parts = [el('p', {}, el('a', { href: '#/dead-letters' }, '← all dead letters')),
      el('h2', {}, 'Letter ', idText(l.id)),
      table({ id: 'letter' }, ['', ''], [
        ['status', el('span', { id: 'letter-status', class: 'letter-status' }, l.status)],
        ['queue', idText(l.queue)], ['kind', idText(l.kind)],
        ['reason', el('span', { class: 'reason' }, freeText(l.reason))],
        ['entity, seq', [entityLink(l.entity), ', ', show(l.seq)]],
        ['dead-lettered', [show(l.deadLettered), ' (', age(l.ageSeconds), ' ago)']],
        ['replayed before', l.replays], ['resolved', show(l.resolvedAt)]
      ].map(([name, value]) => el('tr', {}, el('th', {}, name), el('td', {}, value)))),
      open ? el('p', { id: 'letter-actions' },
        verbs.map(verb => actionButton(ctx, VERBS[verb], verb, ids, [VERBS[verb] + ' letter ', idText(l.id), '?'],
          refresh)),
        el('button', { id: 'edit', 'data-action': 'edit', disabled: !session.canAct || l.body === null
          || l.body === undefined, onclick: () => {
          document.getElementById('edit-body').value = l.body;
          editor.hidden = false;
        } }, 'Edit and replay')) : null,
      open ? editor : null,
      readOnlyNote(),
      el('h3', {}, 'Body'), l.body === null || l.body === undefined ? el('p', { class: 'muted', id: 'letter-body' },
        'No body (purged).') : el('pre', { id: 'letter-body' }, freeText(l.body)),
      l.editedBody === null || l.editedBody === undefined ? null
        : [el('h3', {}, 'Sent instead (edited)'), el('pre', { id: 'letter-edited-body' }, freeText(l.editedBody))],
      el('h3', {}, 'Headers'), table({ id: 'letter-headers' }, ['name', 'value'],
        Object.entries(l.headers || {}).map(([name, value]) => el('tr', { 'data-header': name },
          el('td', {}, idText(name)), el('td', {}, freeText(value))))),
      el('h3', {}, 'What the broker recorded'), (l.deaths || []).length ? el('ul', { id: 'letter-deaths' },
        l.deaths.map(d => el('li', {}, freeText(d)))) : el('p', { class: 'muted', id: 'letter-deaths' }, 'Nothing.'),
      el('h3', {}, 'Actions on this letter'), auditTable('letter-audit', l.audit || [])];
    page(ctx, parts);
  }

  // ---- the audit -----------------------------------------------------------------------------------------------

  async function audit(ctx) {
    const a = await api('audit?limit=100', ctx);
    page(ctx, el('h2', {}, 'Actions on record'), el('p', { class: 'muted' }, 'The last 100, newest first: who did what'
      + ' to which letters, when, how many and with what outcome.'), auditTable('audit', a.entries));
  }

  // ---- an entity -----------------------------------------------------------------------------------------------

  async function entity(ctx, id) {
    const form = el('form', { class: 'inline', id: 'entity-form', onsubmit: (event) => {
      event.preventDefault();
      location.hash = '#/entity/' + encodeURIComponent(document.getElementById('entity-id').value.trim());
    } }, el('label', { for: 'entity-id' }, 'Entity id'), el('input', { id: 'entity-id', size: 40 }),
    el('button', { type: 'submit' }, 'Show'));
    form.querySelector('input').value = id || '';
    if (!id) { page(ctx, form); return; }
    let e;
    try {
      e = await api('entity?id=' + encodeURIComponent(id), ctx);
    } catch (failure) {
      if (!(failure instanceof Stale)) page(ctx, form);   // the form stays to try another id; the line says why
      throw failure;
    }
    const parts = [form, el('h2', {}, 'Live document of ', idText(e.id)),
      e.document === null ? el('p', { class: 'muted', id: 'entity-document' }, 'No live document with this id.')
        : el('pre', { id: 'entity-document' }, freeText(e.document))];
    if (!e.history) {
      parts.push(el('p', { class: 'muted' }, 'History is off: turn it on (orderless.history.enabled) to see versions.'));
    } else {
      parts.push(el('h2', {}, 'Versions (' + e.versions.length + ')'),
        e.unknowable ? el('p', { class: 'muted' }, freeText(e.unknowable)) : null,
        el('ol', { class: 'timeline', id: 'timeline' }, e.versions.map(v => el('li', { 'data-seq': v.seq },
          el('button', { 'data-as-of': v.seq, onclick: () => asOf(ctx, id, v.seq) }, 'seq ' + v.seq), ' ',
          el('code', {}, freeText(v.op)), ' ', el('span', { class: 'outcome' }, v.outcome), ' ',
          el('span', { class: 'muted' }, 'recorded ' + v.recordedAt)))),
        el('div', { id: 'as-of' }));
    }
    page(ctx, parts);
  }

  let asOfPick = 0;   // the seq picked last: an earlier pick's answer coming after it is dropped

  async function asOf(ctx, id, seq) {
    const pick = ++asOfPick;
    let a;
    try {
      a = await api('entity/as-of?id=' + encodeURIComponent(id) + '&seq=' + seq, ctx);
    } catch (e) {
      if (!(e instanceof Stale)) status(e.message, 'error');
      return;
    }
    if (!live(ctx) || pick !== asOfPick) { stale(); return; }   // another entity, or another seq picked since
    document.querySelectorAll('#timeline li').forEach(li =>
      li.classList.toggle('picked', li.getAttribute('data-seq') === String(seq)));
    document.getElementById('as-of').replaceChildren(el('h2', {}, 'As of seq ' + seq),
      a.unknowable ? el('p', { class: 'muted' }, freeText(a.unknowable))
        : el('pre', { id: 'as-of-state' }, freeText(JSON.stringify(a.state, null, 2))));
  }

  // ---- the banner: what is wrong now, on every page ------------------------------------------------------------

  async function banner() {
    const line = document.getElementById('banner');
    try {
      const b = await api('banner', null);
      line.replaceChildren(...b.problems.map(p => el('p', { class: 'problem severity-' + p.severity,
        'data-severity': p.severity },
      // a link only within the console: the server builds it, the page still takes no other
      typeof p.link === 'string' && p.link.startsWith('#/') ? el('a', { href: p.link }, freeText(p.what))
        : freeText(p.what))));
      line.hidden = b.problems.length === 0;
    } catch (e) {
      line.replaceChildren(el('p', { class: 'problem severity-warning', 'data-severity': 'warning' },
        freeText('What is wrong now could not be read: ' + e.message)));
      line.hidden = false;
    }
    setTimeout(banner, BANNER_MS);   // the next once this one answered: never two at once
  }

  // ---- routing -------------------------------------------------------------------------------------------------

  function decoded(part) {
    try { return decodeURIComponent(part); } catch (e) { return part; }   // a hand-typed '%' stays as typed
  }

  // '#/name/rest?filters': the rest is encoded (an id may hold '/', '?' or '%'), the filters a query string
  function parsed() {
    const raw = (location.hash || '#/overview').replace(/^#\/?/, '');
    const mark = raw.indexOf('?');
    const path = mark < 0 ? raw : raw.slice(0, mark);
    const parts = path.split('/').map(decoded);
    return { name: parts[0] || 'overview', rest: parts.slice(1).join('/'),
      params: new URLSearchParams(mark < 0 ? '' : raw.slice(mark + 1)) };
  }

  // the view again once the last answer came (never two requests at once, however slow the answers)
  function poll(ctx, view) {
    timer = setTimeout(async () => {
      if (!live(ctx)) return;
      try {
        await view(ctx);
        if (document.getElementById('status').classList.contains('poll-error')) status('');
      } catch (e) {
        if (!(e instanceof Stale)) status(e.message, 'error poll-error');
      }
      if (live(ctx)) poll(ctx, view);
    }, REFRESH_MS);
  }

  const ROUTES = {
    'overview': { nav: 'overview', what: () => 'the overview', view: ctx => overview(ctx), polled: true },
    'fleet': { nav: 'fleet', what: () => 'the fleet', view: ctx => fleet(ctx), polled: true },
    'dead-letters': { nav: 'dead-letters', what: () => 'the dead letters', view: (ctx, r) => deadLetters(ctx, r.params) },
    'letter': { nav: 'dead-letters', what: r => 'letter ' + idString(r.rest), view: (ctx, r) => letter(ctx, r.rest) },
    'parked': { nav: 'parked', what: () => 'the parked letters', view: (ctx, r) => parked(ctx, r.params) },
    'audit': { nav: 'audit', what: () => 'the audit', view: ctx => audit(ctx) },
    'entity': { nav: 'entity', what: r => r.rest ? 'entity ' + idString(r.rest) : '', view: (ctx, r) => entity(ctx, r.rest) }
  };

  async function route() {
    clearTimeout(timer);
    timer = null;
    current.controller.abort();   // the earlier route's reads: their answers would be dropped anyway
    const ctx = { number: current.number + 1, controller: new AbortController() };
    current = ctx;
    status('');
    const r = parsed();
    const chosen = ROUTES[r.name];
    document.querySelectorAll('header nav a').forEach(a =>
      a.classList.toggle('active', chosen !== undefined && a.id === 'nav-' + chosen.nav));
    document.body.setAttribute('data-route', String(ctx.number));
    if (!chosen) {
      page(ctx, el('p', { class: 'muted' }, 'See the links above.'));
      status('no page \'' + r.name + '\' in the console: overview, fleet, dead-letters, letter, parked, audit or'
        + ' entity', 'error');
      return;
    }
    const what = chosen.what(r);
    loading(what ? 'Loading ' + what + '…' : '');
    try {
      await chosen.view(ctx, r);
    } catch (e) {
      if (e instanceof Stale) return;
      if (live(ctx)) { loading(''); status(e.message, 'error'); }
    } finally {
      if (chosen.polled && live(ctx)) poll(ctx, chosen.view);
    }
  }

  async function start() {
    try {
      session = await api('session', null);
      document.getElementById('session').replaceChildren(session.user ? idText(session.user) : 'anonymous',
        session.canAct ? ' · may act' : ' · read-only');
    } catch (e) {
      status(e.message, 'error');
    }
    window.addEventListener('hashchange', route);
    banner();
    await route();
  }

  document.addEventListener('DOMContentLoaded', start);
})();
