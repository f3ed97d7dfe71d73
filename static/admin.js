// Anteroom admin dashboard. Live figures arrive once a second over Server-Sent Events
// (/admin/live); controls call the admin JSON API with the session's CSRF token.
// Everything is written with textContent: room names and URLs are never parsed as HTML.
(function () {
  'use strict';
  var root = document.getElementById('admin');
  if (!root) return;
  var csrf = root.getAttribute('data-csrf');
  var roomsEl = document.getElementById('rooms');
  var tpl = document.getElementById('room-tpl');
  var cards = {};
  var SVGNS = 'http://www.w3.org/2000/svg';

  function $(id) { return document.getElementById(id); }
  function set(el, text) { if (el && el.textContent !== String(text)) el.textContent = text; }
  function secs(s) {
    if (s === null || s === undefined) return '–';
    if (s < 60) return s + ' s';
    if (s < 5400) return Math.round(s / 60) + ' min';
    return (s / 3600).toFixed(1) + ' h';
  }
  function flash(text, bad) {
    var f = $('flash');
    f.textContent = text;
    f.className = 'flash' + (bad ? ' bad' : '');
    f.hidden = false;
    clearTimeout(flash.t);
    flash.t = setTimeout(function () { f.hidden = true; }, 5000);
  }

  function api(method, path, body) {
    var opts = { method: method, credentials: 'same-origin', headers: { 'X-CSRF-Token': csrf } };
    if (body !== undefined) {
      opts.headers['Content-Type'] = 'application/json';
      opts.body = JSON.stringify(body);
    }
    return fetch(path, opts).then(function (r) {
      if (r.status === 204) return {};
      return r.json().then(function (j) {
        if (!r.ok) throw new Error((j.error && j.error.message) || ('HTTP ' + r.status));
        return j;
      });
    });
  }

  function chart(svg, series) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var W = 600, H = 120, n = series.length;
    var maxQ = 1, maxA = 1;
    series.forEach(function (p) {
      if (p.queue_length !== null && p.queue_length > maxQ) maxQ = p.queue_length;
      if (p.admissions > maxA) maxA = p.admissions;
    });
    var bw = W / n;
    series.forEach(function (p, i) {
      if (!p.admissions) return;
      var h = (p.admissions / maxA) * (H - 10);
      var r = document.createElementNS(SVGNS, 'rect');
      r.setAttribute('x', (i * bw + 1).toFixed(1));
      r.setAttribute('y', (H - h).toFixed(1));
      r.setAttribute('width', Math.max(1, bw - 2).toFixed(1));
      r.setAttribute('height', h.toFixed(1));
      r.setAttribute('class', 'bar-a');
      svg.appendChild(r);
    });
    var pts = [];
    series.forEach(function (p, i) {
      if (p.queue_length === null) return;
      var x = ((i + 0.5) * bw).toFixed(1), y = (H - 4 - (p.queue_length / maxQ) * (H - 14)).toFixed(1);
      pts.push(x + ',' + y);
      var dot = document.createElementNS(SVGNS, 'circle');
      dot.setAttribute('cx', x);
      dot.setAttribute('cy', y);
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
    var label = document.createElementNS(SVGNS, 'title');
    label.textContent = 'Peak waiting ' + maxQ + ', peak admissions ' + maxA + ' per minute';
    svg.appendChild(label);
  }

  function card(room) {
    var c = cards[room.id];
    if (c) return c;
    var node = tpl.content.firstElementChild.cloneNode(true);
    node.id = 'room-' + room.id;
    node.setAttribute('data-room', room.id);
    c = { node: node, f: {}, filled: false };
    node.querySelectorAll('[data-f]').forEach(function (el) { c.f[el.getAttribute('data-f')] = el; });
    wire(node, room.id);
    roomsEl.appendChild(node);
    cards[room.id] = c;
    return c;
  }

  function fill(room) {
    var c = card(room);
    set(c.f.name, room.name);
    set(c.f.id, room.id);
    set(c.f.state, room.state.replace('_', ' '));
    c.f.state.className = 'state s-' + room.state;
    set(c.f.queue_length, room.queue_length);
    set(c.f.active_capacity, room.active + ' / ' + room.capacity);
    set(c.f.admissions_per_minute, room.admissions_per_minute);
    set(c.f.reaped_per_minute, room.reaped_per_minute);
    set(c.f.waits, secs(room.wait_p50_seconds) + ' / ' + secs(room.wait_p90_seconds));
    // The ETA of the last in line with its range; "not known" until the room has a basis.
    var eta = '–';
    if (room.queue_length && room.state === 'paused') eta = 'on hold (paused)';
    else if (room.queue_length && !room.eta_last_known) eta = 'not known (≤ ' + secs(room.eta_last_high_seconds) + ')';
    else if (room.queue_length) eta = secs(room.eta_last_seconds) + ' (' + secs(room.eta_last_low_seconds) + ' – ' + secs(room.eta_last_high_seconds) + ')';
    set(c.f.eta_last, eta);
    set(c.f.turnover, room.turnover_per_minute + ' / min' +
      (room.mean_session_seconds === null ? '' : ', stay ' + room.mean_session_seconds + ' s'));
    set(c.f.stock, room.stock === null ? 'unlimited' : room.stock);
    set(c.f.sockets, room.sockets.length
      ? room.sockets.map(function (s) { return s.instance + ': ' + s.sockets; }).join(', ')
      : 'none');
    chart(c.f.chart, room.series);
    if (!c.filled) {
      // Fill the settings form once; later updates must not overwrite what is typed.
      var form = c.node.querySelector('form[data-act="settings"]');
      ['capacity', 'max_admissions_per_minute', 'session_ttl_secs', 'heartbeat_timeout_secs', 'target_url']
        .forEach(function (k) { form.elements[k].value = room[k]; });
      c.filled = true;
    }
  }

  function render(o) {
    var seen = {};
    o.rooms.forEach(function (r) { seen[r.id] = true; fill(r); });
    Object.keys(cards).forEach(function (id) {
      if (!seen[id]) { cards[id].node.remove(); delete cards[id]; }
    });
    set($('t-rooms'), o.totals.rooms);
    set($('t-queue'), o.totals.queue_length);
    set($('t-active'), o.totals.active + ' / ' + o.totals.capacity);
    set($('t-apm'), o.totals.admissions_per_minute);
    set($('t-sockets'), o.totals.sockets);
    var loss = $('data-loss');
    if (o.store_data_lost_at) {
      var msg = 'The store lost its data at ' + new Date(o.store_data_lost_at).toLocaleTimeString() +
        '. Declared rooms were re-created from the configuration; rooms created here and the places of visitors not yet back are gone.';
      if (loss.textContent !== msg) loss.textContent = msg;
      loss.hidden = false;
    } else {
      loss.hidden = true;
    }
    var tbody = $('audit');
    while (tbody.firstChild) tbody.removeChild(tbody.firstChild);
    o.audit.forEach(function (e) {
      var tr = document.createElement('tr');
      [new Date(e.at).toLocaleTimeString(), e.who, e.room, e.action,
        JSON.stringify(e.old) + ' → ' + JSON.stringify(e.new)].forEach(function (t) {
        var td = document.createElement('td');
        td.textContent = t;
        tr.appendChild(td);
      });
      tbody.appendChild(tr);
    });
  }

  function base(id) { return '/api/admin/rooms/' + encodeURIComponent(id); }

  function wire(node, id) {
    node.querySelector('form[data-act="settings"]').addEventListener('submit', function (e) {
      e.preventDefault();
      var f = e.target.elements, body = {};
      ['capacity', 'max_admissions_per_minute', 'session_ttl_secs', 'heartbeat_timeout_secs'].forEach(function (k) {
        if (f[k].value !== '') body[k] = Number(f[k].value);
      });
      if (f.target_url.value) body.target_url = f.target_url.value;
      api('PUT', base(id), body).then(function () { flash('Saved ' + id + '.'); },
        function (err) { flash(err.message, true); });
    });
    node.querySelectorAll('button[data-act]').forEach(function (b) {
      b.addEventListener('click', function () {
        var act = b.getAttribute('data-act');
        if (act === 'delete' && !confirm('Delete room ' + id + ' and everyone in it?')) return;
        if (act === 'flush' && !confirm('Remove everyone waiting in ' + id + '?')) return;
        var p = act === 'delete' ? api('DELETE', base(id)) : api('POST', base(id) + '/' + act);
        p.then(function () { flash(act + ': done for ' + id + '.'); }, function (err) { flash(err.message, true); });
      });
    });
    node.querySelector('form[data-act="stock"]').addEventListener('submit', function (e) {
      e.preventDefault();
      var mode = (e.submitter && e.submitter.value) || 'set';
      var n = Number(e.target.elements.n.value || 0);
      var body = mode === 'unlimited' ? { unlimited: true } : (mode === 'add' ? { add: n } : { set: n });
      api('POST', base(id) + '/stock', body).then(function () { flash('Stock updated for ' + id + '.'); },
        function (err) { flash(err.message, true); });
    });
    node.querySelector('form[data-act="remove"]').addEventListener('submit', function (e) {
      e.preventDefault();
      var v = e.target.elements.visitor.value.trim();
      api('DELETE', base(id) + '/visitors/' + encodeURIComponent(v)).then(function () {
        flash('Removed ' + v + '.'); e.target.reset();
      }, function (err) { flash(err.message, true); });
    });
  }

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
