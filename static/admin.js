// Anteroom admin dashboard. Live figures arrive once a second over Server-Sent Events
// (/admin/live); controls call the admin JSON API with the session's CSRF token.
// Everything is written with textContent: room names and URLs are never parsed as HTML.
//
// The settings form never writes over a colleague's change. It remembers the values it
// was filled with and the room's configuration version; Save sends only the fields the
// admin changed, with that version, and the API answers 409 with the current values if
// the room has moved on since. Fields the admin has not touched follow the live feed.
(function () {
  'use strict';
  var root = document.getElementById('admin');
  if (!root) return;
  var csrf = root.getAttribute('data-csrf');
  var roomsEl = document.getElementById('rooms');
  var tpl = document.getElementById('room-tpl');
  var cards = {};
  // The room list: one compact row a room (searchable, filtered by state); one room's
  // card at a time below it, the one named in the address (#room-<id>) or the first.
  var rows = {};
  // The latest figures of every room; a card is made only for a room shown (the one
  // selected, or one shown before): 100 cards, each with its chart, took ~1 s to build.
  var latest = {};
  var rowsEl = document.getElementById('room-rows');
  var selected = null;
  var SVGNS = 'http://www.w3.org/2000/svg';
  var FIELDS = ['capacity', 'max_admissions_per_minute', 'session_ttl_secs', 'heartbeat_timeout_secs', 'target_url'];
  var LABELS = {
    capacity: 'Capacity', max_admissions_per_minute: 'Arrivals / min', session_ttl_secs: 'Session TTL (s)',
    heartbeat_timeout_secs: 'Heartbeat timeout (s)', target_url: 'Target URL'
  };
  var CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

  // A viewer changes nothing and an operator sets no secrets, webhooks or deletions:
  // the controls the signed-in role may not use are disabled (the server refuses them
  // anyway with 403 forbidden_role). docs/admin.md#users-and-roles.
  var role = root.getAttribute('data-role') || 'owner';
  var RANK = { viewer: 0, operator: 1, owner: 2 };
  var NEEDS = [
    [1, '#create input, #create button, form[data-act="settings"] input, form[data-act="settings"] button, ' +
      '[data-do="load-current"], button[data-act="pause"], button[data-act="resume"], button[data-act="close"], ' +
      'button[data-act="open"], form[data-act="queueing"] select, form[data-act="queueing"] button, ' +
      'form[data-act="stock"] input, form[data-act="stock"] button, form[data-act="remove"] input, ' +
      'form[data-act="remove"] button, [data-f="found_list"] button'],
    [2, 'button[data-act="flush"], button[data-act="delete"], [data-do="replay-all"], [data-f="dead_list"] button']
  ];
  function lock(scope) {
    NEEDS.forEach(function (n) {
      if (RANK[role] >= n[0]) return;
      scope.querySelectorAll(n[1]).forEach(function (e) {
        e.disabled = true;
        e.title = 'Your role (' + role + ') cannot do this';
      });
    });
  }

  function $(id) { return document.getElementById(id); }
  function set(el, text) { if (el && el.textContent !== String(text)) el.textContent = text; }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function secs(s) {
    if (s === null || s === undefined) return '–';
    if (s < 60) return s + ' s';
    if (s < 5400) return Math.round(s / 60) + ' min';
    return (s / 3600).toFixed(1) + ' h';
  }
  // Feedback next to the control used: in the room's own card when there is one (its
  // `feedback` line, under the controls), else at the top of the page.
  function flash(text, bad, c) {
    var f = c ? c.f.feedback : $('flash');
    var owner = c || flash;
    f.textContent = text;
    f.className = 'flash' + (bad ? ' bad' : '');
    f.hidden = false;
    clearTimeout(owner.flashTimer);
    owner.flashTimer = setTimeout(function () { f.hidden = true; }, 8000);
  }

  // A removal asks first: the button becomes "Confirm: remove …" for 10 s, and only a
  // second press removes.
  function confirmThen(button, what, act) {
    if (button.getAttribute('data-confirm') === 'armed') {
      clearTimeout(button.confirmTimer);
      button.removeAttribute('data-confirm');
      button.textContent = button.getAttribute('data-label');
      act();
      return;
    }
    if (!button.getAttribute('data-label')) button.setAttribute('data-label', button.textContent);
    button.setAttribute('data-confirm', 'armed');
    button.textContent = 'Confirm: remove ' + what;
    button.confirmTimer = setTimeout(function () {
      button.removeAttribute('data-confirm');
      button.textContent = button.getAttribute('data-label');
    }, 10000);
  }
  // The code a visitor reads out (the id's first 40 bits in Crockford base32), as
  // VisitorId::support_code writes it.
  function supportCode(id) {
    if (!/^[0-9a-f]{32}$/.test(id)) return String(id);
    var n = parseInt(id.slice(0, 10), 16), s = '';
    for (var i = 7; i >= 0; i--) s += CROCKFORD.charAt(Math.floor(n / Math.pow(32, i)) % 32);
    return s.slice(0, 4) + '-' + s.slice(4);
  }

  // Rejects with an Error carrying the status and the JSON body (a 409 carries what the
  // dashboard needs to show the conflict).
  function api(method, path, body) {
    var opts = { method: method, credentials: 'same-origin', headers: { 'X-CSRF-Token': csrf } };
    if (body !== undefined) {
      opts.headers['Content-Type'] = 'application/json';
      opts.body = JSON.stringify(body);
    }
    return fetch(path, opts).then(function (r) {
      if (r.status === 204) return {};
      return r.json().then(function (j) {
        if (!r.ok) {
          var err = new Error((j.error && j.error.message) || ('HTTP ' + r.status));
          err.status = r.status;
          err.body = j;
          throw err;
        }
        return j;
      });
    });
  }

  // 1, 2, 5, 10, 20, 50…: the smallest such step at or above n.
  function niceMax(n) {
    var p = 1;
    while (p * 10 <= n) p *= 10;
    return [1, 2, 5, 10].map(function (m) { return m * p; }).filter(function (m) { return m >= n; })[0];
  }

  // Waiting (line and dots) and admissions per minute (bars) on one scale from 0 to a
  // round maximum, labelled on the y axis; the x axis is the last 30 minutes.
  function chart(c, room) {
    var svg = c.f.chart, series = room.series;
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var W = 600, H = 120, n = series.length;
    var maxQ = 0, maxA = 0;
    series.forEach(function (p) {
      if (p.queue_length !== null && p.queue_length > maxQ) maxQ = p.queue_length;
      if (p.admissions > maxA) maxA = p.admissions;
    });
    var top = niceMax(Math.max(maxQ, maxA, room.queue_length, 1));
    set(c.f.y_max, top);
    set(c.f.y_mid, top % 2 === 0 ? top / 2 : '');
    var y = function (v) { return H - (v / top) * (H - 4); };
    (top % 2 === 0 ? [top, top / 2] : [top]).forEach(function (v) {
      var g = document.createElementNS(SVGNS, 'line');
      g.setAttribute('x1', '0');
      g.setAttribute('x2', String(W));
      g.setAttribute('y1', y(v).toFixed(1));
      g.setAttribute('y2', y(v).toFixed(1));
      g.setAttribute('class', 'grid');
      svg.appendChild(g);
    });
    var bw = W / n;
    series.forEach(function (p, i) {
      if (!p.admissions) return;
      var r = document.createElementNS(SVGNS, 'rect');
      r.setAttribute('x', (i * bw + 1).toFixed(1));
      r.setAttribute('y', y(p.admissions).toFixed(1));
      r.setAttribute('width', Math.max(1, bw - 2).toFixed(1));
      r.setAttribute('height', (H - y(p.admissions)).toFixed(1));
      r.setAttribute('class', 'bar-a');
      svg.appendChild(r);
    });
    var pts = [];
    series.forEach(function (p, i) {
      if (p.queue_length === null) return;
      var px = ((i + 0.5) * bw).toFixed(1), py = y(p.queue_length).toFixed(1);
      pts.push(px + ',' + py);
      var dot = document.createElementNS(SVGNS, 'circle');
      dot.setAttribute('cx', px);
      dot.setAttribute('cy', py);
      dot.setAttribute('r', '3');
      dot.setAttribute('class', 'dot-q');
      svg.appendChild(dot);
    });
    if (pts.length) {
      var line = document.createElementNS(SVGNS, 'polyline');
      line.setAttribute('points', pts.join(' '));
      line.setAttribute('class', 'line-q');
      svg.appendChild(line);
    }
    var now = 'Now: ' + room.queue_length + ' waiting, ' + room.admissions_per_minute + ' admissions / min.';
    set(c.f.chart_now, now);
    var label = 'Chart of the last 30 minutes, scale 0 to ' + top + '. Waiting: ' + room.queue_length +
      ' now, at most ' + maxQ + '. Admissions: ' + room.admissions_per_minute +
      ' a minute now, at most ' + maxA + ' in a minute.';
    if (svg.getAttribute('aria-label') !== label) svg.setAttribute('aria-label', label);
  }

  function card(room) {
    var c = cards[room.id];
    if (c) return c;
    var node = tpl.content.firstElementChild.cloneNode(true);
    node.id = 'room-' + room.id;
    node.setAttribute('data-room', room.id);
    c = { id: room.id, node: node, f: {}, btn: {}, filled: false, base: {}, version: null, room: room, conflict: null };
    node.querySelectorAll('[data-f]').forEach(function (e) { c.f[e.getAttribute('data-f')] = e; });
    node.querySelectorAll('button[data-act]').forEach(function (b) { c.btn[b.getAttribute('data-act')] = b; });
    c.form = node.querySelector('form[data-act="settings"]');
    c.stock = node.querySelector('form[data-act="stock"]');
    c.queueing = node.querySelector('form[data-act="queueing"]');
    // The preview of the room's visitor page, in a new tab (docs/visitor-page.md#preview).
    if (c.f.preview_form) c.f.preview_form.action = '/admin/rooms/' + encodeURIComponent(room.id) + '/preview';
    // The stock error is tied to its input for screen readers.
    c.f.stock_error.id = 'stock-error-' + room.id;
    c.stock.elements.n.setAttribute('aria-describedby', c.f.stock_error.id);
    wire(c);
    roomsEl.appendChild(node);
    cards[room.id] = c;
    node.hidden = room.id !== selected;
    detail(c);
    c.detailTimer = setInterval(function () { detail(c); }, DETAIL_EVERY_MS);
    lock(node);
    return c;
  }

  // What the live feed does not carry (it is read from the room's event stream, too
  // heavy to push every second): the FIFO audit from the room's detail, and a drop's
  // commitment and seed from its public fairness record.
  var DETAIL_EVERY_MS = 30000;
  // The adaptive outflow's decisions (docs/outflow.md): the capacity as bars, the
  // origin's p95 as a line on its own scale, the target as a grid line; the last
  // decision's figures (errors included) in words.
  function outflowChart(c, res) {
    var pts = res.outflow || [], box = c.f.outflow_box, svg = c.f.outflow_chart;
    if (!box || !svg) return;
    box.hidden = pts.length === 0;
    if (!pts.length) return;
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var W = 600, H = 120, n = pts.length, bw = W / n;
    var target = (res.config.outflow || {}).target_p95_ms || 0;
    var capTop = niceMax(Math.max.apply(null, pts.map(function (p) { return p.capacity; }).concat([1])));
    var msTop = niceMax(Math.max.apply(null, pts.map(function (p) { return p.p95_ms || 0; }).concat([target * 1.5, 1])));
    var shape = function (tag, attrs) {
      var e = document.createElementNS(SVGNS, tag);
      Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
      svg.appendChild(e);
    };
    pts.forEach(function (p, i) {
      var h = (p.capacity / capTop) * (H - 4);
      shape('rect', { x: (i * bw).toFixed(1), y: (H - h).toFixed(1), width: Math.max(1, bw - 1).toFixed(1), height: h.toFixed(1), 'class': 'bar-a' });
    });
    var ty = (H - (target / msTop) * (H - 4)).toFixed(1);
    if (target) shape('line', { x1: '0', x2: String(W), y1: ty, y2: ty, 'class': 'grid' });
    var line = [];
    pts.forEach(function (p, i) {
      if (p.p95_ms === null || p.p95_ms === undefined) return;
      line.push(((i + 0.5) * bw).toFixed(1) + ',' + (H - (Math.min(p.p95_ms, msTop) / msTop) * (H - 4)).toFixed(1));
    });
    if (line.length) shape('polyline', { points: line.join(' '), 'class': 'line-q' });
    var last = pts[pts.length - 1];
    var p95 = last.p95_ms === null ? 'no signal' : Math.round(last.p95_ms) + ' ms p95';
    var err = last.error_rate === null ? '' : ', ' + (last.error_rate * 100).toFixed(1) + ' % errors';
    var now = 'Capacity ' + last.capacity + ' (' + last.decision + '): origin ' + p95 + err +
      ' against a target of ' + target + ' ms; ' + last.live + ' live, ' + last.waiting + ' waiting.';
    set(c.f.outflow_now, now);
    var label = 'Adaptive outflow, last ' + n + ' decisions: capacity bars from 0 to ' + capTop +
      ', origin p95 line from 0 to ' + msTop + ' ms, target line at ' + target + ' ms. ' + now;
    if (svg.getAttribute('aria-label') !== label) svg.setAttribute('aria-label', label);
  }

  function detail(c) {
    if (cards[c.id] !== c) { clearInterval(c.detailTimer); return; }
    if (c.id !== selected) return;
    deadLetters(c);
    api('GET', base(c.id)).then(function (res) {
      outflowChart(c, res);
      // No-shows (docs/outflow.md#no-shows): shown for a room with a claim timeout.
      var claim = res.config.claim_timeout_secs || 0;
      c.f.no_shows_box.hidden = !claim && !res.no_shows;
      set(c.f.no_shows, (res.no_shows || 0).toLocaleString('en') + (claim ? ' (after ' + claim + ' s)' : ''));
      var a = res.fifo_audit;
      if (!a) return;
      set(c.f.fifo_audit, a.admissions
        ? a.discordant_pairs.toLocaleString('en') + ' discordant pairs in ' + a.admissions.toLocaleString('en') +
          ' admissions (Kendall tau ' + a.normalised.toFixed(3) + ')'
        : 'no admissions from the line');
    }, function () { /* the next round tries again */ });
    fetch('/api/rooms/' + encodeURIComponent(c.id) + '/fairness', { credentials: 'same-origin', cache: 'no-store' })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (f) {
        var on = !!(f && f.commitment);
        c.f.fairness_box.hidden = !on;
        if (!on) return;
        set(c.f.commitment, f.commitment);
        // In random mode the seed decides every draw: it is shown once the room is closed
        // or its event ended; a drop's, once its shuffle is done (at the opening).
        set(c.f.seed, f.seed || (f.mode === 'random'
          ? 'not revealed yet (when the room closes)'
          : 'not revealed yet' + (f.opens_at ? ' (at the opening, ' + new Date(f.opens_at).toLocaleString() + ')' : '')));
        set(c.f.prequeue, (f.prequeue_count || 0).toLocaleString('en') + ' in the pre-queue');
      }, function () { /* no fairness record: not a drop */ });
  }

  // A room's webhook dead letters (read when its card is shown, every 30 s, and when
  // the live figures say the list changed): each with its event, when and why it was
  // given up, and a Replay button; the outcome is said under the list.
  var ROLE_RANK = { viewer: 0, operator: 1, owner: 2 }[root.getAttribute('data-role') || 'owner'];
  function deadSay(c, text, bad) {
    var f = c.f.dead_feedback;
    f.textContent = text;
    f.className = 'flash' + (bad ? ' bad' : '');
    f.hidden = false;
    clearTimeout(c.deadTimer);
    c.deadTimer = setTimeout(function () { f.hidden = true; }, 8000);
  }
  function deadLetters(c) {
    var w = c.room && c.room.webhook;
    if (!w || !(w.dead_letters_kept || w.dead_letters)) { c.f.dead_box.hidden = true; return; }
    api('GET', base(c.id) + '/webhook/dead-letters').then(function (res) { showDead(c, res); },
      function () { /* the next round tries again */ });
  }
  function replay(c, eventId, button) {
    var path = base(c.id) + '/webhook/dead-letters/' + (eventId ? encodeURIComponent(eventId) + '/' : '') + 'replay';
    button.disabled = true;
    api('POST', path).then(function (res) {
      var n = res.replayed.length;
      button.disabled = false;
      deadSay(c, n
        ? (eventId ? 'Replayed event ' + eventId : 'Replayed ' + n + (n === 1 ? ' dead letter' : ' dead letters')) +
          ': sent again within a second, with the same webhook-id.'
        : 'Nothing to replay: no dead letter is kept now.');
      deadLetters(c);
    }, function (err) {
      button.disabled = false;
      deadSay(c, 'Not replayed: ' + err.message, true);
    });
  }
  function showDead(c, res) {
    var list = res.dead_letters, ul = c.f.dead_list, counts = res.counts;
    c.f.dead_box.hidden = !list.length && !counts.dead_letters;
    set(c.f.dead_text, list.length
      ? list.length + (list.length === 1 ? ' delivery' : ' deliveries') + ' given up' +
        (counts.dead_letters > list.length ? ' (of ' + counts.dead_letters + ' since the room was created; older ones were replayed or not kept)' : '') +
        '. Replay sends a letter again with all its attempts.'
      : 'None kept now (' + counts.dead_letters + ' given up since the room was created, all replayed or not kept).');
    while (ul.firstChild) ul.removeChild(ul.firstChild);
    list.slice(0, 20).forEach(function (l) {
      var li = el('li');
      li.appendChild(el('strong', null, l.type || 'event'));
      li.appendChild(el('code', null, l.event_id));
      li.appendChild(el('span', 'why small', 'given up ' + new Date(l.dead_at).toLocaleString() + ' after ' +
        l.attempts + (l.attempts === 1 ? ' attempt' : ' attempts') + ': ' + l.error));
      var b = el('button', 'button secondary', 'Replay');
      b.type = 'button';
      b.setAttribute('aria-label', 'Replay ' + (l.type || 'event') + ' ' + l.event_id);
      b.addEventListener('click', function () { replay(c, l.event_id, b); });
      li.appendChild(b);
      var d = el('details');
      d.appendChild(el('summary', 'small', 'Payload'));
      d.appendChild(el('pre', null, JSON.stringify(l.payload, null, 2)));
      li.appendChild(d);
      ul.appendChild(li);
    });
    if (list.length > 20) ul.appendChild(el('li', 'small muted', 'and ' + (list.length - 20) + ' older (Replay all replays them too)'));
    var all = c.node.querySelector('[data-do="replay-all"]');
    all.hidden = list.length < 2;
    // Replaying needs an owner (docs/admin.md#users-and-roles); the server refuses others.
    if (ROLE_RANK < 2) {
      c.node.querySelectorAll('.dead-letters button').forEach(function (b) {
        b.disabled = true;
        b.title = 'Your role cannot replay webhooks';
      });
    }
  }

  function rateHint(c) {
    set(c.f.rate_hint, c.form.elements.max_admissions_per_minute.value === '0' ? '(off)' : '(0 = off)');
  }

  // Takes the room's values into the inputs the admin is not working on; the version
  // moves on only when every changed field could be taken, so a field the admin is
  // editing that a colleague changed makes Save come back 409 instead of overwriting.
  function follow(c, room) {
    var f = c.form.elements, blocked = false;
    FIELDS.forEach(function (k) {
      var now = String(room[k]), input = f[k];
      if (now === c.base[k]) return;
      if (input.value === now) { c.base[k] = now; return; }
      if (input.value !== c.base[k] || input === document.activeElement) { blocked = true; return; }
      input.value = now;
      c.base[k] = now;
    });
    if (!blocked) c.version = room.version;
    rateHint(c);
  }

  // A live message after the first sends a room's last two chart points
  // (`series_tail`), not its 30: they are merged into the series this page holds, by
  // minute, keeping the last 30.
  function mergeSeries(old, tail) {
    var byMinute = {};
    (old || []).concat(tail).forEach(function (p) { byMinute[p.minute] = p; });
    return Object.keys(byMinute).map(Number).sort(function (a, b) { return a - b; })
      .slice(-30).map(function (m) { return byMinute[m]; });
  }

  function fill(room) {
    if (!room.series && room.series_tail) {
      room.series = mergeSeries(latest[room.id] && latest[room.id].series, room.series_tail);
    }
    latest[room.id] = room;
    row(room);
    if (selected === null && !fromHash()) selected = room.id;
    if (room.id !== selected && !cards[room.id]) return;
    var c = card(room);
    c.room = room;
    set(c.f.name, room.name);
    set(c.f.id, room.id);
    // A mode other than FIFO, or queueing everyone, shows beside the state.
    var how = room.queue_all ? 'queueing everyone' : (room.mode && room.mode !== 'fifo' ? room.mode : '');
    set(c.f.state, room.state.replace('_', ' ') + (how ? ' · ' + how : ''));
    c.f.state.className = 'state s-' + room.state;
    set(c.f.queue_length, room.queue_length);
    set(c.f.active_capacity, room.active + ' / ' + room.capacity);
    set(c.f.admissions_per_minute, room.admissions_per_minute);
    set(c.f.reaped_per_minute, room.reaped_per_minute);
    set(c.f.waits, secs(room.wait_p50_seconds) + ' / ' + secs(room.wait_p90_seconds));
    // The ETA of the last in line with its range; "not known" until the room has a basis.
    var eta = '–';
    if (room.queue_length && room.state === 'paused') eta = 'on hold (paused)';
    if (room.queue_length && room.state === 'rejected') eta = 'on hold (rejecting)';
    else if (room.queue_length && !room.eta_last_known) eta = 'not known (≤ ' + secs(room.eta_last_high_seconds) + ')';
    else if (room.queue_length) eta = secs(room.eta_last_seconds) + ' (' + secs(room.eta_last_low_seconds) + ' – ' + secs(room.eta_last_high_seconds) + ')';
    set(c.f.eta_last, eta);
    set(c.f.turnover, room.turnover_per_minute + ' / min' +
      (room.mean_session_seconds === null ? '' : ', stay ' + room.mean_session_seconds + ' s'));
    set(c.f.stock, room.stock === null ? 'unlimited' : room.stock);
    set(c.f.sockets, room.sockets.length
      ? room.sockets.map(function (s) { return s.instance + ': ' + s.sockets; }).join(', ')
      : 'none');
    // Signed webhook: deliveries waiting for a retry, and those given up (dead letters).
    c.f.webhook_box.hidden = !room.webhook;
    if (room.webhook) set(c.f.webhook, room.webhook.pending + ' / ' + room.webhook.dead_letters);
    var deadKey = room.webhook ? room.webhook.dead_letters + '/' + room.webhook.dead_letters_kept : '';
    if (c.deadKey !== undefined && deadKey !== c.deadKey && c.id === selected) deadLetters(c);
    c.deadKey = deadKey;
    // Priority lanes: each lane's share, who waits in it and who was let in from it (with
    // the part of all let in from a lane that this is).
    c.f.lanes_box.hidden = !room.lanes.length;
    if (room.lanes.length) {
      var let_in = room.lanes.reduce(function (n, l) { return n + l.admitted; }, 0);
      set(c.f.lanes, room.lanes.map(function (l) {
        var part = let_in ? ' (' + Math.round(100 * l.admitted / let_in) + ' %)' : '';
        return (l.lane || 'general') + ' ' + Math.round(100 * l.share) + ' %: ' + l.waiting +
          ' waiting, ' + l.admitted + ' let in' + part;
      }).join(' · '));
    }
    chart(c, room);
    switches(c, room);
    if (!c.filled) {
      FIELDS.forEach(function (k) { c.base[k] = String(room[k]); c.form.elements[k].value = c.base[k]; });
      c.version = room.version;
      c.filled = true;
      rateHint(c);
    } else if (room.version > c.version) {
      // (A feed snapshot taken before this dashboard's own save can arrive after it:
      // versions only grow, so an older one is not followed back.)
      follow(c, room);
    }
  }

  // Only the switches that would change something are enabled.
  function switches(c, flags) {
    c.btn.pause.disabled = flags.closed || flags.paused;
    c.btn.resume.disabled = !flags.paused;
    c.btn.close.disabled = flags.closed;
    c.btn.open.disabled = !flags.closed;
    queueing(c, flags);
    lock(c.node);
  }

  // The queueing mode and the emergency queue_all switch as the room has them now. The
  // select follows the room unless the admin picked another mode and has not switched yet.
  function queueing(c, flags) {
    if (flags.mode === undefined) return;
    var sel = c.queueing.elements.mode, all = c.queueing.querySelector('[data-do="queue-all"]');
    if (c.mode === undefined || sel.value === c.mode) sel.value = flags.mode;
    c.mode = flags.mode;
    c.queueAll = !!flags.queue_all;
    all.textContent = c.queueAll ? 'Stop queueing everyone' : 'Queue everyone';
    all.setAttribute('aria-pressed', c.queueAll ? 'true' : 'false');
  }

  var MODE_ASKS = {
    passthrough: 'Let everyone in at once, with no queue and no capacity limit?',
    reject: 'Stop admitting and queueing anyone new?'
  };

  function changeQueueing(c, body, what) {
    api('PUT', base(c.id), body).then(function (res) {
      if (res.config) queueing(c, res.config);
      flash(what + ' for ' + c.id + '.', false, c);
    }, function (err) { flash(err.message, true, c); });
  }

  // How an audit value reads: unlimited stock and an arrival cap of 0 in words, a visitor
  // by the code they would read out, a whole config summed up.
  function auditValue(e, v) {
    switch (e.action) {
      case 'set stock': return v === null ? 'unlimited' : String(v);
      case 'set max_admissions_per_minute': return v === 0 ? 'off' : v + ' / min';
      case 'set paused': case 'set closed': case 'set queue_all': return v ? 'yes' : 'no';
      case 'set embed_origins': return v && v.length ? v.join(', ') : 'none';
      case 'remove visitor': return v === null ? 'removed' : supportCode(v);
      case 'flush queue': return v + ' waiting';
      case 'create room': case 'delete room':
        return v === null ? (e.action === 'create room' ? 'none' : 'deleted') : 'capacity ' + v.capacity;
    }
    if (v === null || v === undefined) return 'none';
    return typeof v === 'object' ? JSON.stringify(v) : String(v);
  }

  function drop(id) {
    if (cards[id]) { cards[id].node.remove(); clearInterval(cards[id].detailTimer); delete cards[id]; }
    if (rows[id]) { rows[id].tr.remove(); delete rows[id]; }
    delete latest[id];
    if (selected === id) selected = null;
  }

  function fromHash() {
    var h = decodeURIComponent(location.hash || '');
    return h.indexOf('#room-') === 0 ? h.slice(6) : null;
  }

  function select(id) {
    var was = selected, existed = !!cards[id];
    selected = id;
    if (!existed && latest[id]) fill(latest[id]);
    Object.keys(cards).forEach(function (k) { cards[k].node.hidden = k !== id; });
    if (existed && id !== was) detail(cards[id]);
    Object.keys(rows).forEach(function (k) {
      if (k === id) rows[k].tr.setAttribute('aria-current', 'true');
      else rows[k].tr.removeAttribute('aria-current');
    });
  }

  // A row of the list: name (a link to the room's card), state, figures, and a
  // sparkline of the last 30 minutes' waiting.
  function row(room) {
    var r = rows[room.id];
    if (!r) {
      var tr = document.createElement('tr');
      tr.id = 'row-' + room.id;
      var a = el('a');
      a.href = '#room-' + encodeURIComponent(room.id);
      var tdName = el('td');
      tdName.appendChild(a);
      tr.appendChild(tdName);
      r = { tr: tr, a: a, cells: {} };
      ['state', 'queue_length', 'active_capacity', 'admissions_per_minute'].forEach(function (k) {
        var td = el('td', k === 'state' ? null : 'fig');
        r.cells[k] = k === 'state' ? td.appendChild(el('span', 'state')) : td;
        tr.appendChild(td);
      });
      var tdSpark = el('td');
      var svg = document.createElementNS(SVGNS, 'svg');
      svg.setAttribute('viewBox', '0 0 60 16');
      svg.setAttribute('class', 'spark');
      svg.setAttribute('aria-hidden', 'true');
      r.spark = document.createElementNS(SVGNS, 'polyline');
      svg.appendChild(r.spark);
      tdSpark.appendChild(svg);
      tr.appendChild(tdSpark);
      rowsEl.appendChild(tr);
      rows[room.id] = r;
      if (room.id === selected) tr.setAttribute('aria-current', 'true');
    }
    set(r.a, room.name && room.name !== room.id ? room.name + ' (' + room.id + ')' : room.id);
    set(r.cells.state, room.state.replace('_', ' '));
    r.cells.state.className = 'state s-' + room.state;
    r.state = room.state;
    r.text = (room.id + ' ' + (room.name || '')).toLowerCase();
    set(r.cells.queue_length, room.queue_length);
    set(r.cells.active_capacity, room.active + ' / ' + room.capacity);
    set(r.cells.admissions_per_minute, room.admissions_per_minute);
    var pts = (room.series || []).map(function (p) { return p.queue_length || 0; });
    var top = Math.max.apply(null, pts.concat([1]));
    var line = pts.map(function (v, i) {
      return (pts.length > 1 ? (i * 60) / (pts.length - 1) : 0).toFixed(1) + ',' + (15 - (v / top) * 14).toFixed(1);
    }).join(' ');
    if (r.spark.getAttribute('points') !== line) r.spark.setAttribute('points', line);
    listFilter(r);
  }

  var searchEl = $('room-search'), filterEl = $('room-filter');
  function listFilter(r) {
    var q = searchEl.value.trim().toLowerCase(), st = filterEl.value;
    r.tr.hidden = (q && r.text.indexOf(q) < 0) || (st && r.state !== st);
  }
  function refilter() {
    var shown = 0, all = Object.keys(rows).length;
    Object.keys(rows).forEach(function (k) { listFilter(rows[k]); if (!rows[k].tr.hidden) shown += 1; });
    var noun = all === 1 ? ' room' : ' rooms';
    set($('room-count'), shown === all ? all + noun : shown + ' of ' + all + noun);
  }
  searchEl.addEventListener('input', refilter);
  filterEl.addEventListener('change', refilter);
  window.addEventListener('hashchange', function () {
    var id = fromHash();
    if (id && latest[id]) select(id);
  });

  // A live message: the whole overview (`full`, and the page's initial data), or only
  // what changed since the last (the rooms whose figures changed, `removed`, and
  // `totals`, `audit` and `store_data_lost_at` when they changed).
  function render(o) {
    var full = o.full !== false;
    var seen = {};
    o.rooms.forEach(function (r) { seen[r.id] = true; fill(r); });
    if (full) {
      Object.keys(latest).forEach(function (id) { if (!seen[id]) drop(id); });
    }
    (o.removed || []).forEach(drop);
    if (selected === null || !cards[selected]) {
      var first = fromHash();
      if (!first || !latest[first]) first = Object.keys(latest)[0];
      if (first) select(first);
    }
    refilter();
    if (o.totals) {
      set($('t-rooms'), o.totals.rooms);
      set($('t-queue'), o.totals.queue_length);
      set($('t-active'), o.totals.active + ' / ' + o.totals.capacity);
      set($('t-apm'), o.totals.admissions_per_minute);
      set($('t-sockets'), o.totals.sockets);
    }
    if ('store_data_lost_at' in o) lossBanner(o);
    if (o.audit) auditRows(o.audit);
    // The sections under the list are shown once it is drawn (anteroom.css says why).
    root.classList.add('ready');
  }

  function lossBanner(o) {
    var loss = $('data-loss');
    if (o.store_data_lost_at) {
      var msg = 'The store lost its data at ' + new Date(o.store_data_lost_at).toLocaleTimeString() +
        '. Declared rooms were re-created from the configuration; rooms created here and the places of visitors not yet back are gone.';
      if (loss.textContent !== msg) loss.textContent = msg;
      loss.hidden = false;
    } else {
      loss.hidden = true;
    }
  }

  function auditRows(audit) {
    var tbody = $('audit');
    while (tbody.firstChild) tbody.removeChild(tbody.firstChild);
    var heads = ['When', 'Who', 'Room', 'What', 'Old → new'];
    audit.forEach(function (e) {
      var tr = document.createElement('tr');
      [new Date(e.at).toLocaleTimeString(), e.who, e.room, e.action,
        auditValue(e, e.old) + ' → ' + auditValue(e, e.new)].forEach(function (t, i) {
        var td = el('td', null, t);
        td.setAttribute('data-label', heads[i]);
        tr.appendChild(td);
      });
      tbody.appendChild(tr);
    });
  }

  function base(id) { return '/api/admin/rooms/' + encodeURIComponent(id); }

  function showConflict(c, body) {
    c.conflict = body;
    var cur = body.config;
    var theirs = FIELDS.filter(function (k) { return String(cur[k]) !== c.base[k]; });
    set(c.f.conflict_text, theirs.length
      ? 'someone else changed ' + (theirs.length === 1 ? 'this setting' : 'these settings') + ' while you were editing.'
      : 'someone else changed this room while you were editing.');
    var ul = c.f.conflict_fields;
    while (ul.firstChild) ul.removeChild(ul.firstChild);
    theirs.forEach(function (k) {
      var mine = c.form.elements[k].value;
      ul.appendChild(el('li', null, LABELS[k] + ': now ' + cur[k] + ' (was ' + c.base[k] + ' when you started' +
        (mine !== c.base[k] ? '; you entered ' + mine : '') + ')'));
    });
    c.f.conflict.hidden = false;
  }

  function loadCurrent(c) {
    var cur = c.conflict.config, f = c.form.elements;
    FIELDS.forEach(function (k) {
      var now = String(cur[k]);
      if (f[k].value === c.base[k] || now !== c.base[k]) f[k].value = now;
      c.base[k] = now;
    });
    c.version = c.conflict.version;
    c.conflict = null;
    c.f.conflict.hidden = true;
    rateHint(c);
    f.capacity.focus();
    flash('Loaded the current settings of ' + c.id + '.', false, c);
  }

  function save(c) {
    var f = c.form.elements, body = {}, changed = [];
    FIELDS.forEach(function (k) {
      if (f[k].value === c.base[k]) return;
      body[k] = k === 'target_url' ? f[k].value : Number(f[k].value);
      changed.push(LABELS[k]);
    });
    if (!changed.length) { flash('Nothing to save for ' + c.id + ': no setting was changed.', false, c); return; }
    body.version = c.version;
    api('PUT', base(c.id), body).then(function (res) {
      FIELDS.forEach(function (k) { c.base[k] = String(res.config[k]); f[k].value = c.base[k]; });
      c.version = res.version;
      c.conflict = null;
      c.f.conflict.hidden = true;
      switches(c, res.config);
      flash('Saved ' + changed.join(', ') + ' for ' + c.id + '.', false, c);
    }, function (err) {
      if (err.status === 409 && err.body && err.body.config) {
        showConflict(c, err.body);
        flash('Not saved: ' + c.id + ' was changed by someone else.', true, c);
      } else {
        flash(err.message, true, c);
      }
    });
  }

  function stockError(c, text) {
    var input = c.stock.elements.n;
    c.f.stock_error.textContent = text;
    c.f.stock_error.hidden = !text;
    if (text) { input.setAttribute('aria-invalid', 'true'); input.focus(); } else input.removeAttribute('aria-invalid');
  }

  function stock(c, mode) {
    var raw = c.stock.elements.n.value.trim(), body;
    if (mode === 'unlimited') {
      body = { unlimited: true };
    } else {
      // An empty or non-numeric box is an error here, never "0".
      if (!/^\d+$/.test(raw)) return stockError(c, 'Enter a whole number of units first.');
      var n = Number(raw);
      if (mode === 'add' && n === 0) return stockError(c, 'Top up by at least 1 unit.');
      var waiting = c.room.queue_length;
      if (mode === 'set' && n === 0 && waiting > 0 &&
        !confirm('Set the stock of ' + c.id + ' to 0? The room becomes sold out, and the ' + waiting +
          (waiting === 1 ? ' person' : ' people') + ' waiting will be told so.')) return;
      body = mode === 'add' ? { add: n } : { set: n };
    }
    stockError(c, '');
    api('POST', base(c.id) + '/stock', body).then(function (res) {
      flash('Stock of ' + c.id + ' is now ' + (res.new === null ? 'unlimited' : res.new) + '.', false, c);
      c.stock.reset();
    }, function (err) { flash(err.message, true, c); });
  }

  // Shows visitors (a search's result, or the matches of an ambiguous code), each with
  // a Remove button that names them by full id.
  function showFound(c, text, visitors) {
    set(c.f.found_text, text);
    var ul = c.f.found_list;
    while (ul.firstChild) ul.removeChild(ul.firstChild);
    visitors.forEach(function (v) {
      var li = el('li');
      li.appendChild(el('strong', null, v.support_code));
      li.appendChild(document.createTextNode(' ' + (v.state === 'queued' ? 'queued, position ' + v.position : 'admitted') + ' '));
      li.appendChild(el('code', 'id', v.id));
      var b = el('button', 'button secondary', 'Remove');
      b.type = 'button';
      b.setAttribute('aria-label', 'Remove visitor ' + v.support_code);
      b.addEventListener('click', function () {
        confirmThen(b, v.support_code, function () {
          api('DELETE', base(c.id) + '/visitors/' + v.id).then(function () {
            li.remove();
            flash('Removed ' + v.support_code + ' from ' + c.id + '.', false, c);
          }, function (err) { flash(err.message, true, c); });
        });
      });
      li.appendChild(b);
      ul.appendChild(li);
    });
    lock(ul);
    c.f.found.hidden = false;
  }

  function wire(c) {
    var node = c.node, id = c.id;
    var all = node.querySelector('[data-do="replay-all"]');
    all.addEventListener('click', function () { replay(c, null, all); });
    c.form.addEventListener('submit', function (e) { e.preventDefault(); save(c); });
    c.form.elements.max_admissions_per_minute.addEventListener('input', function () { rateHint(c); });
    node.querySelector('[data-do="load-current"]').addEventListener('click', function () { loadCurrent(c); });
    node.querySelectorAll('button[data-act]').forEach(function (b) {
      b.addEventListener('click', function () {
        var act = b.getAttribute('data-act');
        if (act === 'delete' && !confirm('Delete room ' + id + ' and everyone in it?')) return;
        if (act === 'flush' && !confirm('Remove everyone waiting in ' + id + '?')) return;
        var p = act === 'delete' ? api('DELETE', base(id)) : api('POST', base(id) + '/' + act);
        p.then(function (res) {
          if (res.config) switches(c, res.config);
          flash(act + ': done for ' + id + '.', false, c);
        }, function (err) { flash(err.message, true, c); });
      });
    });
    c.queueing.addEventListener('submit', function (e) {
      e.preventDefault();
      var mode = c.queueing.elements.mode.value;
      if (mode === c.mode) return flash(id + ' is already in ' + mode + ' mode.', false, c);
      if (MODE_ASKS[mode] && !confirm(MODE_ASKS[mode] + ' (' + id + ')')) return;
      changeQueueing(c, { mode: mode }, 'Mode ' + mode);
    });
    c.queueing.querySelector('[data-do="queue-all"]').addEventListener('click', function () {
      var on = !c.queueAll;
      if (on && !confirm('Queue every newcomer in ' + id + ' and let nobody new in?')) return;
      changeQueueing(c, { queue_all: on }, on ? 'Queueing everyone' : 'Stopped queueing everyone');
    });
    c.stock.addEventListener('submit', function (e) {
      e.preventDefault();
      stock(c, (e.submitter && e.submitter.value) || 'set');
    });
    c.stock.elements.n.addEventListener('input', function () { stockError(c, ''); });
    node.querySelector('form[data-act="find"]').addEventListener('submit', function (e) {
      e.preventDefault();
      var q = e.target.elements.q.value.trim();
      if (!q) return;
      var param = /^[0-9a-fA-F]{32}$/.test(q) ? 'id=' : 'code=';
      api('GET', base(id) + '/visitors?' + param + encodeURIComponent(q)).then(function (res) {
        showFound(c, res.visitors.length
          ? (res.visitors.length === 1 ? '1 visitor matches ' : res.visitors.length + ' visitors match ') + q + ':'
          : 'Nobody queued or admitted in ' + id + ' matches ' + q + '.', res.visitors);
      }, function (err) { flash(err.message, true, c); });
    });
    node.querySelector('form[data-act="remove"]').addEventListener('submit', function (e) {
      e.preventDefault();
      var form = e.target;
      var v = form.elements.visitor.value.trim();
      if (!v) return;
      confirmThen(form.querySelector('button'), v, function () {
        api('DELETE', base(id) + '/visitors/' + encodeURIComponent(v)).then(function () {
          flash('Removed ' + v + ' from ' + id + '.', false, c); form.reset();
        }, function (err) {
          if (err.status === 409 && err.body && err.body.visitors) {
            showFound(c, v + ' matches ' + err.body.visitors.length + ' visitors; nobody was removed. Remove one by its id:',
              err.body.visitors);
          }
          flash(err.message, true, c);
        });
      });
    });
  }

  lock(document);
  $('create').addEventListener('submit', function (e) {
    e.preventDefault();
    var f = e.target.elements;
    var body = { capacity: Number(f.capacity.value), target_url: f.target_url.value };
    if (f.name.value) body.name = f.name.value;
    if (f.session_ttl_secs.value) body.session_ttl_secs = Number(f.session_ttl_secs.value);
    api('PUT', base(f.id.value), body).then(function () {
      flash('Created ' + f.id.value + '.'); e.target.reset();
    }, function (err) { flash(err.message, true); });
  });

  var initial = root.getAttribute('data-initial');
  if (initial) { try { render(JSON.parse(initial)); } catch (err) { /* wait for live */ } }

  var status = $('live-status');
  function connect() {
    var es = new EventSource('/admin/live');
    es.onopen = function () { status.textContent = 'Live'; status.classList.add('live'); };
    es.onmessage = function (e) { try { render(JSON.parse(e.data)); } catch (err) { /* skip */ } };
    es.onerror = function () {
      status.textContent = 'Reconnecting…';
      status.classList.remove('live');
    };
  }
  connect();
})();
