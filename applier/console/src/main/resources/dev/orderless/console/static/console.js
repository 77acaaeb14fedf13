// The orderless console: a static page over the console's JSON. Everything shown from documents and messages is
// set as text (el() below makes elements and text nodes; nothing here assigns markup), so an entity id or a reason
// holding "<img onerror=...>" is shown as those characters.
'use strict';

(function () {
  const REFRESH_MS = 2000;
  const KEEP_MS = 5 * 60 * 1000;   // the chart's window: the last five minutes since the page opened
  let session = { canAct: false, csrf: null, actionHeader: 'X-Orderless-Console' };
  let timer = null;
  let route_ = 0;       // the current route's number: a poll of an earlier route stops itself
  const samples = [];   // {time, rates: {queue: msgs/s}, lags: {view: s}}
  let last = null;      // the previous overview, to turn counters into rates

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === 'onclick' || name === 'onsubmit') node[name] = value;
      else node.setAttribute(name, value === true ? '' : String(value));
    }
    for (const child of children.flat()) {
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

  function status(text, kind) {
    const line = document.getElementById('status');
    line.textContent = text || '';
    line.className = 'status' + (kind ? ' ' + kind : '');
  }

  async function api(path, options) {
    const response = await fetch('api/' + path, Object.assign({ credentials: 'same-origin',
      headers: { 'Accept': 'application/json' } }, options || {}));
    let body = null;
    try { body = await response.json(); } catch (e) { body = null; }
    if (!response.ok) {
      const why = body && body.error ? body.error : 'HTTP ' + response.status + ' from ' + path;
      throw new Error(why);
    }
    return body;
  }

  async function act(path) {
    const headers = { 'Accept': 'application/json' };
    headers[session.actionHeader] = '1';
    if (session.csrf) headers[session.csrf.header] = session.csrf.token;
    return api(path, { method: 'POST', headers: headers });
  }

  function page(...children) {
    const section = document.getElementById('page');
    section.replaceChildren(...children.flat().filter(child => child !== null && child !== undefined));
  }

  function stateCell(state) {
    return el('td', { class: 'state state-' + state }, state);
  }

  function show(value) {
    return value === null || value === undefined ? '—' : value;
  }

  // ---- overview ------------------------------------------------------------------------------------------------

  function record(overview) {
    const rates = {};
    if (last) {
      const seconds = (overview.time - last.time) / 1000;
      for (const consumer of overview.consumers) {
        const before = last.consumers.find(c => c.queue === consumer.queue);
        if (before && seconds > 0 && consumer.handled !== undefined && before.handled !== undefined) {
          rates[consumer.queue] = Math.max(0, (consumer.handled - before.handled) / seconds);
        }
      }
    }
    const lags = {};
    for (const feeder of overview.feeders) {
      if (feeder.lagSeconds !== null && feeder.lagSeconds !== undefined) lags[feeder.view] = feeder.lagSeconds;
    }
    samples.push({ time: overview.time, rates: rates, lags: lags });
    while (samples.length && samples[0].time < overview.time - KEEP_MS) samples.shift();
    last = overview;
    return rates;
  }

  function chart(title, id, pick) {
    const width = 560, height = 140, pad = 28;
    const names = [...new Set(samples.flatMap(s => Object.keys(pick(s))))];
    const figure = svg('svg', { width: width, height: height, class: 'chart', id: id, role: 'img' });
    const label = svg('text', { x: pad, y: 14 });
    label.textContent = title;
    figure.append(label);
    if (!samples.length) return figure;
    const t0 = samples[0].time, t1 = Math.max(samples[samples.length - 1].time, t0 + 1);
    let top = 0;
    samples.forEach(s => Object.values(pick(s)).forEach(v => { top = Math.max(top, v); }));
    top = top > 0 ? top * 1.1 : 1;
    figure.append(svg('line', { x1: pad, y1: height - pad, x2: width - 4, y2: height - pad, class: 'axis' }));
    const max = svg('text', { x: 2, y: pad });
    max.textContent = top.toFixed(top < 10 ? 1 : 0);
    figure.append(max);
    names.forEach((name, i) => {
      const points = samples.filter(s => pick(s)[name] !== undefined).map(s => {
        const x = pad + (s.time - t0) / (t1 - t0) * (width - pad - 4);
        const y = height - pad - pick(s)[name] / top * (height - 2 * pad);
        return x.toFixed(1) + ',' + y.toFixed(1);
      });
      figure.append(svg('polyline', { points: points.join(' '), class: 'series-' + (i % 3) }));
      const legend = svg('text', { x: pad + 140 * i, y: height - 8, class: 'series-' + (i % 3) });
      legend.textContent = name;
      figure.append(legend);
    });
    return figure;
  }

  async function overview() {
    const o = await api('overview');
    const rates = record(o);
    const consumers = el('table', { id: 'consumers' },
      el('tr', {}, el('th', {}, 'queue'), el('th', {}, 'state'), el('th', {}, 'messages/s'), el('th', {}, 'retrying'),
        el('th', {}, 'waiting for'), el('th', {}, 'handled'), el('th', {}, 'dead-lettered')),
      o.consumers.map(c => el('tr', { 'data-queue': c.queue },
        el('td', {}, c.queue), stateCell(c.state),
        el('td', {}, rates[c.queue] === undefined ? '…' : rates[c.queue].toFixed(1)),
        el('td', {}, c.retrying), el('td', {}, show(c.waitingFor)), el('td', { class: 'handled' }, show(c.handled)),
        el('td', {}, el('a', { href: '#/dead-letters' }, show(c.deadLettered))))));
    const feeders = el('table', { id: 'feeders' },
      el('tr', {}, el('th', {}, 'view'), el('th', {}, 'state'), el('th', {}, 'lag (s)'), el('th', {}, 'segments'),
        el('th', {}, 'lease holders'), el('th', {}, 'dead-lettered'), el('th', {}, 'failure')),
      o.feeders.map(f => el('tr', { 'data-view': f.view },
        el('td', {}, f.view), stateCell(f.state),
        el('td', {}, f.lagSeconds === null || f.lagSeconds === undefined ? '—' : f.lagSeconds.toFixed(2)),
        el('td', {}, f.segmentCount === undefined ? '—'
          : Object.keys(f.segments || {}).length + ' of ' + f.segmentCount + ' fed here'),
        el('td', {}, f.holders ? Object.entries(f.holders).map(([r, h]) => r + ': ' + h).join(', ') : '—'),
        el('td', {}, show(f.deadLettered)), el('td', {}, show(f.failure)))));
    const parts = [el('h2', {}, 'Consumers'),
      o.consumers.length ? consumers : el('p', { class: 'muted' }, 'No consumer in this application.'),
      el('h2', {}, 'View feeders'),
      o.feeders.length ? feeders : el('p', { class: 'muted' }, 'No view feeder in this application.')];
    if (o.outbox) {
      parts.push(el('h2', {}, 'Outbox'), el('table', { id: 'outbox' },
        el('tr', {}, el('th', {}, 'state'), el('th', {}, 'backlog'), el('th', {}, 'oldest (s)'),
          el('th', {}, 'parked'), el('th', {}, 'published'), el('th', {}, 'problem')),
        el('tr', {}, stateCell(o.outbox.state), el('td', {}, o.outbox.backlog), el('td', {}, show(o.outbox.oldestSeconds)),
          el('td', {}, o.outbox.parked), el('td', {}, o.outbox.published), el('td', {}, show(o.outbox.problem)))));
    }
    if (o.passes.length) {
      parts.push(el('h2', {}, 'Passes'), el('table', { id: 'passes' },
        el('tr', {}, el('th', {}, 'pass'), el('th', {}, 'state'), el('th', {}, 'passes'), el('th', {}, 'failures'),
          el('th', {}, 'last failure')),
        o.passes.map(p => el('tr', {}, el('td', {}, p.name), stateCell(p.state), el('td', {}, p.passes),
          el('td', {}, p.failures), el('td', {}, show(p.lastFailure))))));
    }
    parts.push(el('h2', {}, 'Last minutes'),
      chart('messages/s by queue', 'chart-rates', s => s.rates), ' ',
      chart('view lag (s)', 'chart-lag', s => s.lags));
    page(parts);
  }

  // ---- dead letters --------------------------------------------------------------------------------------------

  function confirmThen(question, run) {
    const bar = el('div', { id: 'confirm', class: 'status' }, question, ' ',
      el('button', { id: 'confirm-yes', class: 'danger', onclick: async () => { bar.remove(); await run(); } }, 'Confirm'),
      el('button', { id: 'confirm-no', onclick: () => bar.remove() }, 'Cancel'));
    const old = document.getElementById('confirm');
    if (old) old.remove();
    document.getElementById('page').prepend(bar);
  }

  function action(label, verb, queue, kind, count, max) {
    const query = 'queue=' + encodeURIComponent(queue) + (kind ? '&kind=' + encodeURIComponent(kind) : '')
      + (max ? '&max=' + max : '');
    // an action takes letters by kind, whatever their reason: the question says how many that is
    const question = label + ': ' + (max ? 'up to ' + max + ' of the ' : 'all ') + count + ' listed letter(s) of kind '
      + kind + ' on ' + queue + ', whatever their reason?' + (verb === 'purge' ? ' Purged letters are gone for good.' : '');
    return el('button', { 'data-action': verb, 'data-kind': kind, class: verb === 'purge' ? 'danger' : null,
      disabled: !session.canAct,
      title: session.canAct ? null : 'needs the role ' + session.actionRole,
      onclick: () => confirmThen(question, async () => {
        try {
          const done = await act('dead-letters/' + verb + '?' + query);
          status(done.result, 'result');
        } catch (e) {
          status(e.message, 'error');
        }
        await deadLetters(false);
      }) }, label);
  }

  async function deadLetters(clearStatus) {
    const d = await api('dead-letters');
    const parts = [];
    for (const q of d.queues) {
      parts.push(el('h2', {}, 'Dead letters of ' + q.queue));
      if (q.error) { parts.push(el('p', { class: 'status error' }, q.error)); continue; }
      if (!q.groups.length) { parts.push(el('p', { class: 'muted', id: 'no-letters' }, 'No dead letters.')); continue; }
      if (q.depth > q.listed) parts.push(el('p', { class: 'muted', id: 'depth' }, 'The queue holds ' + q.depth
        + ' letters; these are the first ' + q.listed + '.'));
      // one row per kind with its actions (they take letters by kind), then its reasons, most frequent first
      const rows = [];
      for (const [kind, count] of Object.entries(q.kinds)) {
        rows.push(el('tr', { class: 'kind', 'data-kind': kind },
          el('th', {}, kind), el('th', { class: 'count' }, count), el('th', { colspan: 2 },
            el('a', { href: '#/letters/' + encodeURIComponent(q.queue) + '/' + encodeURIComponent(kind),
              'data-letters': kind }, 'read the letters')),
          el('th', {}, action('Replay one', 'replay', q.queue, kind, count, 1),
            action('Replay all', 'replay', q.queue, kind, count, null),
            action('Park all', 'park', q.queue, kind, count, null), action('Purge all', 'purge', q.queue, kind, count, null))));
        for (const g of q.groups.filter(g => g.kind === kind)) {
          rows.push(el('tr', { class: 'group', 'data-kind': g.kind },
            el('td', {}, ''), el('td', { class: 'count' }, g.count), el('td', { class: 'reason' }, g.reason),
            el('td', {}, g.entities.map(e => el('a', { href: '#/entity/' + encodeURIComponent(e), class: 'entity' }, e, ' '))),
            el('td', {}, '')));
        }
      }
      parts.push(el('table', { class: 'groups', 'data-queue': q.queue },
        el('tr', {}, el('th', {}, 'kind'), el('th', {}, 'letters'), el('th', {}, 'reason'), el('th', {}, 'sample entities'),
          el('th', {}, '')), rows));
    }
    if (d.replayGrace) parts.push(el('p', { class: 'muted' }, 'A replay refuses letters older than ' + d.replayGrace
      + ' (the tombstone grace): replaying them could resurrect what was removed.'));
    if (!session.canAct) parts.push(el('p', { class: 'muted', id: 'read-only' },
      'Read-only: replaying, parking and purging need the role ' + session.actionRole + '.'));
    page(parts);
    if (clearStatus) status('');
  }

  async function letters(queue, kind) {
    const d = await api('dead-letters/letters?queue=' + encodeURIComponent(queue) + '&kind=' + encodeURIComponent(kind));
    page(el('h2', {}, 'Letters of kind ' + kind + ' on ' + queue),
      el('p', {}, el('a', { href: '#/dead-letters' }, '← all dead letters')),
      d.letters.length ? d.letters.map(l => el('article', { class: 'letter' },
        el('table', {},
          el('tr', {}, el('th', {}, 'reason'), el('td', { class: 'reason' }, l.reason)),
          el('tr', {}, el('th', {}, 'entity, seq'), el('td', {}, l.entity
            ? el('a', { href: '#/entity/' + encodeURIComponent(l.entity) }, l.entity) : '—', ', ', show(l.seq))),
          el('tr', {}, el('th', {}, 'dead-lettered'), el('td', {}, show(l.deadLettered))),
          el('tr', {}, el('th', {}, 'replayed before'), el('td', {}, l.replays)),
          el('tr', {}, el('th', {}, 'broker record'), el('td', {}, l.deaths.length ? l.deaths.join('; ') : 'none'))),
        el('pre', { class: 'body' }, l.body))) : el('p', { class: 'muted' }, 'No letters of this kind now.'));
  }

  // ---- an entity -----------------------------------------------------------------------------------------------

  async function entity(id) {
    const form = el('form', { class: 'inline', id: 'entity-form', onsubmit: (event) => {
      event.preventDefault();
      location.hash = '#/entity/' + encodeURIComponent(document.getElementById('entity-id').value.trim());
    } }, el('label', { for: 'entity-id' }, 'Entity id'), el('input', { id: 'entity-id', value: id || '', size: 40 }),
    el('button', { type: 'submit' }, 'Show'));
    if (!id) { page(form); return; }
    const e = await api('entity?id=' + encodeURIComponent(id));
    const parts = [form, el('h2', {}, 'Live document of ' + e.id),
      e.document === null ? el('p', { class: 'muted', id: 'entity-document' }, 'No document with this id.')
        : el('pre', { id: 'entity-document' }, e.document)];
    if (!e.history) {
      parts.push(el('p', { class: 'muted' }, 'History is off: turn it on (orderless.history.enabled) to see versions.'));
    } else {
      parts.push(el('h2', {}, 'Versions (' + e.versions.length + ')'),
        e.unknowable ? el('p', { class: 'muted' }, e.unknowable) : null,
        el('ol', { class: 'timeline', id: 'timeline' }, e.versions.map(v => el('li', { 'data-seq': v.seq },
          el('button', { 'data-as-of': v.seq, onclick: () => asOf(id, v.seq) }, 'seq ' + v.seq), ' ',
          el('code', {}, v.op), ' ', el('span', { class: 'outcome' }, v.outcome), ' ',
          el('span', { class: 'muted' }, 'recorded ' + v.recordedAt)))),
        el('div', { id: 'as-of' }));
    }
    page(parts);
  }

  async function asOf(id, seq) {
    const a = await api('entity/as-of?id=' + encodeURIComponent(id) + '&seq=' + seq);
    document.querySelectorAll('#timeline li').forEach(li =>
      li.classList.toggle('picked', li.getAttribute('data-seq') === String(seq)));
    document.getElementById('as-of').replaceChildren(el('h2', {}, 'As of seq ' + seq),
      a.unknowable ? el('p', { class: 'muted' }, a.unknowable)
        : el('pre', { id: 'as-of-state' }, JSON.stringify(a.state, null, 2)));
  }

  // ---- routing -------------------------------------------------------------------------------------------------

  function decoded(part) {
    try { return decodeURIComponent(part); } catch (e) { return part; }   // a hand-typed '%' stays as typed
  }

  // the overview again once the last answer came (never two requests at once, however slow the answers)
  function poll(number) {
    timer = setTimeout(async () => {
      if (number !== route_) return;
      try { await overview(); } catch (e) { status(e.message, 'error'); }
      if (number === route_) poll(number);
    }, REFRESH_MS);
  }

  async function route() {
    clearTimeout(timer);
    timer = null;
    const number = ++route_;
    const parts = (location.hash || '#/overview').slice(2).split('/').map(decoded);
    document.querySelectorAll('header nav a').forEach(a =>
      a.classList.toggle('active', a.id === 'nav-' + (parts[0] === 'letters' ? 'dead-letters' : parts[0])));
    try {
      if (parts[0] === 'dead-letters') await deadLetters(true);
      else if (parts[0] === 'letters') await letters(parts[1], parts[2]);
      else if (parts[0] === 'entity') await entity(parts.slice(1).join('/'));
      else {
        try { await overview(); } finally { if (number === route_) poll(number); }
      }
    } catch (e) {
      status(e.message, 'error');
    }
  }

  async function start() {
    try {
      session = await api('session');
      document.getElementById('session').textContent = (session.user ? session.user : 'anonymous')
        + (session.canAct ? ' · may act' : ' · read-only');
    } catch (e) {
      status(e.message, 'error');
    }
    window.addEventListener('hashchange', route);
    await route();
  }

  document.addEventListener('DOMContentLoaded', start);
})();
