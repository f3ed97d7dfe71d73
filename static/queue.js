// Anteroom queue page and embed widget. Plain JS, no dependencies.
//
// Live updates come over a WebSocket (/r/{room}/ws). If it drops we reconnect with
// capped exponential backoff and full jitter, so thousands of visitors reconnecting
// after an outage spread out; the place is kept because joining is idempotent. If
// WebSockets never open (blocked by a proxy), we poll the status API instead, honouring
// 429 Retry-After. In the embed widget the visitor token is kept in the iframe's own
// storage, so it works with third-party cookies blocked.
(function () {
  'use strict';
  var root = document.getElementById('anteroom');
  if (!root) return;
  var cfg = JSON.parse(root.getAttribute('data-config'));
  // The admin's preview of a state (/admin/rooms/{room}/preview): shown as rendered, with
  // no socket and no join.
  if (cfg.preview) return;
  var t = cfg.strings;
  var ds = cfg.drop_strings || {};
  var xs = cfg.told_strings || {};
  // What the server decided (domain::told): the message, figures and notes codes, worded
  // with cfg.messages and cfg.notes. Nothing on this page decides what to tell.
  var shownMessage = root.getAttribute('data-message') || null;
  var shownNotes = (cfg.initial_notes || []).slice();
  var sticky = shownNotes.filter(function (c) { return (cfg.sticky_notes || []).indexOf(c) >= 0; });
  var $ = function (id) { return document.getElementById(id); };

  var BACKOFF_BASE_MS = 500;
  var BACKOFF_CAP_MS = 30000;
  var PING_EVERY_MS = 10000;
  var SILENCE_MS = 20000;       // no frame for this long: the socket is dead
  var POLL_MS = 5000;
  var WS_FAILURES_BEFORE_POLLING = 3;

  var tokenKey = 'anteroom:token:' + cfg.room;
  var startKey = 'anteroom:start:' + cfg.room;
  var token = null;
  // The latest place receipt (join and status answers): if the store loses its data, the
  // join that follows brings it and the place comes back.
  var placeReceipt = cfg.place_receipt || null;
  var ws = null;
  var attempt = 0;
  var everOpened = false;
  var failures = 0;
  var polling = false;
  var lastFrameAt = 0;
  var done = false;
  // Whether the visitor holds a place now, and whether they ever did on this page: a
  // newcomer on a closed or sold-out room has none, and joins by itself when it opens.
  var hasPlace = !!cfg.has_place;
  var everHadPlace = hasPlace;
  var rejoining = false;
  var lastPlace = cfg.position || 0;
  var placeAnnouncedAt = 0;
  var PLACE_ANNOUNCE_EVERY_MS = 30000;
  var baseTitle = document.title;

  // A drop (a room with `opens_at`): the opening times (seconds since the epoch) and the
  // server's clock, as the offset of its `now_ms` from this browser's clock when a view
  // arrived, so the countdown is the server's, whatever the visitor's clock says.
  var opensAt = cfg.opens_at || null;
  var prequeueAt = cfg.prequeue_opens_at || null;
  var clockOffset = cfg.now_ms ? cfg.now_ms - Date.now() : 0;
  var countdownTimer = null;
  var fairnessShown = false;
  var fairnessAskedAt = 0;
  var fairnessDone = false;

  // Numbers as the page's language writes them (Arabic-Indic digits in Arabic: the
  // numbering system the server writes its own figures in, `cfg.numbering`).
  var numberFormat = null;
  try {
    numberFormat = new Intl.NumberFormat(cfg.lang, { numberingSystem: cfg.numbering || 'latn', useGrouping: false });
  } catch (e) { /* an old browser: Western digits */ }
  function num(n) { return numberFormat ? numberFormat.format(n) : String(n); }
  // Every ASCII digit of a text in the page's digits ("02" in a countdown).
  function digits(text) { return String(text).replace(/[0-9]/g, function (d) { return num(Number(d)); }); }
  function fmt(s, vars) {
    return s.replace(/\{(\w+)\}/g, function (_, k) {
      var v = vars[k];
      return v === undefined ? '' : typeof v === 'number' ? num(v) : v;
    });
  }
  // A message with plural forms: the server hands one text per CLDR category of the
  // language (`cfg.plurals`), and the browser's own plural rules pick one.
  var pluralRules = null;
  try { pluralRules = new Intl.PluralRules(cfg.lang); } catch (e) { /* other form */ }
  function plural(key, table, n) {
    var forms = cfg.plurals && cfg.plurals[key];
    if (!forms) return table[key];
    var c = pluralRules ? pluralRules.select(n) : 'other';
    return forms[c] || forms.other || table[key];
  }
  function store(kind) {
    try { return window[kind]; } catch (e) { return null; }
  }
  function duration(secs) {
    if (secs < 60) return t.eta_under_minute;
    var mins = Math.ceil(secs / 60);
    if (mins < 90) return fmt(plural('eta_minutes', t, mins), { n: mins });
    var h = Math.floor(mins / 60), m = mins % 60;
    var hours = fmt(plural('eta_hours', t, h), { n: h });
    return m === 0 ? hours : hours + ' ' + fmt(plural('eta_minutes', t, m), { n: m });
  }
  // Worded as the server words it (domain::i18n::Strings::eta).
  function etaText(low, high) {
    var l = duration(low), h = duration(high);
    if (l === h) return l;
    if (low < 60) return fmt(t.eta_up_to, { t: h });
    if (Math.ceil(high / 60) < 90) return fmt(t.eta_minutes_range, { low: Math.ceil(low / 60), high: Math.ceil(high / 60) });
    return fmt(t.eta_range, { low: l, high: h });
  }
  // A range, "not known yet (at most …)", or on hold while paused: never a countdown
  // without a basis.
  function etaShown(m) {
    if (m.state === 'paused') return t.eta_paused;
    if (m.eta_known === false) {
      if (m.eta_high_seconds > 0 && m.eta_high_seconds < 60) return t.eta_at_most_minute;
      return m.eta_high_seconds > 0 ? fmt(t.eta_at_most, { t: duration(m.eta_high_seconds) }) : t.eta_unknown;
    }
    return etaText(m.eta_low_seconds, m.eta_high_seconds);
  }
  // Random mode's figure, worded as the server words it (web::visitor::chances).
  function chancesText(m) {
    if (m.state === 'paused') return xs.chances_paused;
    if (m.eta_known === false) {
      return m.eta_high_seconds > 0 ? fmt(xs.chances_unknown, { t: duration(m.eta_high_seconds) }) : t.eta_unknown;
    }
    return fmt(plural('chances', xs, m.queue_length), {
      n: m.queue_length, median: duration(m.eta_seconds),
      low: duration(m.eta_low_seconds), high: duration(m.eta_high_seconds)
    });
  }
  // The notes: a sticky one ("you were away") until the visitor dismisses it, every
  // other one exactly while the server sends it.
  function noteText(code) {
    var s = cfg.notes && cfg.notes[code];
    return s ? fmt(s, { time: localTime(prequeueAt), open: localTime(opensAt) }) : '';
  }
  function renderNotes(codes) {
    codes.forEach(function (c) {
      if ((cfg.sticky_notes || []).indexOf(c) >= 0 && sticky.indexOf(c) < 0) sticky.push(c);
    });
    var all = sticky.concat(codes.filter(function (c) { return sticky.indexOf(c) < 0; }));
    shownNotes = codes;
    setText('eta-note', all.map(noteText).filter(function (x) { return x; }).join(' '));
    show('dismiss-box', sticky.length > 0);
  }
  function ahead(position) {
    if (position <= 1) return t.ahead_none;
    return fmt(plural('ahead_many', t, position - 1), { n: position - 1 });
  }
  function setText(id, text) {
    var el = $(id);
    if (el && el.textContent !== String(text)) el.textContent = text;
    if (BOUND[id]) bound(BOUND[id], function (e) { if (e.textContent !== String(text)) e.textContent = text; });
  }
  // A room's own template binds its elements by attribute (docs/visitor-page.md#live-updates):
  // each `data-anteroom` name gets what the built-in element of that id gets.
  var BOUND = {
    position: 'position', ahead: 'ahead', 'in-line': 'in-line', eta: 'eta', title: 'title',
    lead: 'message', 'eta-note': 'note', chances: 'chances', countdown: 'countdown',
    conn: 'connection', updated: 'updated', 'support-code': 'support-code'
  };
  function bound(name, each) {
    var els = document.querySelectorAll('[data-anteroom="' + name + '"]');
    for (var i = 0; i < els.length; i++) each(els[i]);
  }
  function boundProgress(pct) {
    bound('progress', function (e) { if (e.tagName === 'PROGRESS') e.value = pct; else e.textContent = pct + '%'; });
  }
  function show(id, on) {
    var el = $(id);
    if (el) el.hidden = !on;
  }
  function conn(text) {
    setText('conn', text);
    var el = $('conn');
    if (el) el.classList.toggle('live', text === t.live);
  }
  // "Live" only while updates arrive: the server sends a status at least every 5 s, so
  // a socket silent for longer is not live, whatever its state says.
  var STALE_MS = 9000;
  var lastUpdateAt = Date.now();
  var lastUpdate = '';
  function notLive() {
    conn(fmt(xs.not_live, { t: lastUpdate || '–' }));
  }
  // The polite live region: only the place, the state and the admission are read out.
  function announce(text) {
    var el = $('announce');
    if (el && text) el.textContent = text;
  }
  // "updated 14:02:05" next to the live dot: when the server last said anything.
  function touched() {
    var d = new Date();
    var hh = function (n) { return (n < 10 ? '0' : '') + n; };
    lastUpdate = digits(d.getHours() + ':' + hh(d.getMinutes()) + ':' + hh(d.getSeconds()));
    setText('updated', fmt(t.updated_at, { t: lastUpdate }));
  }

  // The opening times and the server's clock from a view (join, status, socket frame).
  function noteTimes(m) {
    if (typeof m.now_ms === 'number') clockOffset = m.now_ms - Date.now();
    if (m.opens_at !== undefined) opensAt = m.opens_at;
    if (m.prequeue_opens_at !== undefined) prequeueAt = m.prequeue_opens_at;
  }
  function serverNow() { return Date.now() + clockOffset; }
  // A moment in the visitor's own time zone, with the date when it is not today.
  function localTime(secs) {
    if (!secs) return '';
    var d = new Date(secs * 1000), locale = cfg.lang === 'en' ? 'en-GB' : cfg.lang;
    var opts = { hour: '2-digit', minute: '2-digit', timeZoneName: 'short' };
    if (d.toDateString() !== new Date(serverNow()).toDateString()) {
      opts.weekday = 'short'; opts.day = 'numeric'; opts.month = 'short';
    }
    try { return d.toLocaleString(locale, opts); } catch (e) { return d.toString(); }
  }
  function two(n) { return (n < 10 ? '0' : '') + n; }
  function countdownText(ms) {
    var s = Math.max(0, Math.ceil(ms / 1000));
    var h = Math.floor(s / 3600), m = Math.floor(s % 3600 / 60), sec = s % 60;
    // Chinese and Japanese write a number and its unit without a space (drops.rs).
    var sep = /^(zh|ja)/.test(cfg.lang) ? '' : ' ';
    var parts = [];
    if (h) parts.push(h + sep + ds.unit_hours);
    if (h || m) parts.push((h ? two(m) : m) + sep + ds.unit_minutes);
    parts.push((h || m ? two(sec) : sec) + sep + ds.unit_seconds);
    return digits(parts.join(sep));
  }
  // What the countdown counts to: the pre-queue's opening (or the line's, without one)
  // while scheduled, the opening while in the pre-queue.
  function countdownTarget() {
    var at = cfg.state === 'scheduled' ? (prequeueAt || opensAt) : opensAt;
    return at ? at * 1000 : null;
  }
  var openedAt = 0;
  function tick() {
    var target = countdownTarget();
    if (target === null) return;
    var left = target - serverNow();
    setText('countdown', left > 0 ? countdownText(left) : ds.countdown_now);
    if (left > 0) { openedAt = 0; return; }
    // The opening second: the socket's status moves the page on. A scheduled visitor has
    // no place yet: join now. Polling, or a socket that says nothing within a few
    // seconds: ask once.
    if (!openedAt) {
      openedAt = Date.now();
      if (cfg.state === 'scheduled') joinNow();
      else if (polling) pollNow();
    } else if (Date.now() - openedAt > OPENING_GRACE_MS) {
      openedAt = Date.now();
      pollNow();
    }
  }
  var OPENING_GRACE_MS = 3000;
  function countdown(on) {
    show('countdown-box', on);
    if (on && !countdownTimer) { countdownTimer = setInterval(tick, 250); }
    if (!on && countdownTimer) { clearInterval(countdownTimer); countdownTimer = null; }
    if (on) tick();
  }

  // "How was my place decided?": once a drop's seed is revealed, shown to a visitor in
  // the line; opened, it checks the visitor's own rank here with Web Crypto.
  function fairnessPath() { return '/api/rooms/' + encodeURIComponent(cfg.room) + '/fairness'; }
  function getJson(u) {
    return fetch(u, { credentials: 'same-origin', cache: 'no-store' }).then(function (r) {
      if (!r.ok) throw new Error('HTTP ' + r.status);
      return r.json();
    });
  }
  function maybeFairness() {
    if (fairnessShown || !opensAt || !cfg.visitor_id) return;
    if (cfg.state !== 'queued' && cfg.state !== 'paused') return;
    if (Date.now() - fairnessAskedAt < POLL_MS) return;
    fairnessAskedAt = Date.now();
    getJson(fairnessPath()).then(function (f) {
      if (!f.seed || fairnessShown) return;
      fairnessShown = true;
      show('fairness', true);
    }, function () { /* not revealed, or not a drop: asked again later */ });
  }
  function hex(buf) {
    return Array.prototype.map.call(new Uint8Array(buf), function (b) { return (b < 16 ? '0' : '') + b.toString(16); }).join('');
  }
  function unhex(h) {
    var a = new Uint8Array(h.length / 2);
    for (var i = 0; i < a.length; i++) a[i] = parseInt(h.substr(i * 2, 2), 16);
    return a;
  }
  function checkFairness() {
    var subtle = window.crypto && window.crypto.subtle;
    if (!subtle || !window.TextEncoder) {
      setText('fair-result', fmt(ds.fair_unavailable, { url: fairnessPath() }));
      return;
    }
    setText('fair-result', ds.fair_checking);
    Promise.all([getJson(fairnessPath()), getJson(fairnessPath() + '/digests')]).then(function (got) {
      var f = got[0], digests = got[1].digests || [];
      if (!f.seed) throw new Error('not revealed');
      var seed = unhex(f.seed);
      return Promise.all([
        subtle.digest('SHA-256', seed),
        subtle.importKey('raw', seed, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']).then(function (k) {
          return subtle.sign('HMAC', k, new TextEncoder().encode(cfg.visitor_id));
        })
      ]).then(function (h) {
        var committed = hex(h[0]) === f.commitment, draw = hex(h[1]);
        var i = digests.indexOf(draw);
        var text = i < 0 ? fmt(ds.fair_not_in, { draw: draw.slice(0, 8) })
          : fmt(ds.fair_result, {
            draw: draw.slice(0, 8), rank: i + 1,
            n: digests.length, ok: committed ? ds.fair_yes : ds.fair_no
          });
        // "rank 7 of 8" beside "place 5": why they differ (the server's words).
        show('fair-rank', i >= 0);
        if (!committed) text += ' ' + ds.fair_mismatch;
        setText('fair-result', text);
        fairnessDone = true;
      });
    }).catch(function () {
      setText('fair-result', ds.fair_failed);
      // A passing failure (a busy store, a rate limit): asked again while it is open.
      setTimeout(function () {
        if (fairness && fairness.open && !fairnessDone) checkFairness();
      }, POLL_MS);
    });
  }
  var fairness = $('fairness');
  if (fairness) {
    fairness.addEventListener('toggle', function () {
      if (fairness.open && !fairnessDone) checkFairness();
    });
  }

  var WAITING = { queued: 1, paused: 1 };
  var COUNTING = { scheduled: 1, prequeue: 1 };

  // Shows what the server decided: the message (headline, lead), which figures, which
  // notes. Returns the words a screen reader hears for it when the message changed.
  function render(m) {
    var said = cfg.messages[m.message];
    if (!said) return '';
    var changed = shownMessage !== m.message;
    root.className = root.className.replace(/state-[\w-]+/, 'state-' + m.state);
    root.setAttribute('data-message', m.message);
    document.documentElement.setAttribute('data-anteroom-state', m.state);
    bound('state', function (e) { e.textContent = m.state; e.setAttribute('data-state', m.state); });
    var lead = said.lead;
    if (m.state === 'scheduled') lead = fmt(lead, { time: localTime(prequeueAt || opensAt) });
    if (m.state === 'prequeue') lead = fmt(lead, { time: localTime(opensAt) });
    setText('title', said.title);
    setText('lead', lead);
    var figures = m.figures || [];
    var has = function (f) { return figures.indexOf(f) >= 0; };
    var waiting = !!WAITING[m.state];
    show('numbers', waiting);
    show('place-box', has('place'));
    show('eta-box', has('eta'));
    show('chances-box', has('chances'));
    var bar = root.querySelector('.progress');
    if (bar) bar.hidden = !has('progress');
    show('keep-open', waiting);
    show('rejoin', m.state === 'not_queued' || m.state === 'no_show');
    show('notify', waiting && notifyUsable());
    cfg.state = m.state;
    shownMessage = m.message;
    countdown(has('countdown') || (!!COUNTING[m.state] && countdownTarget() !== null));
    if (!waiting) show('fairness', false);
    else if (fairnessShown) show('fairness', true);
    renderNotes(m.notes || []);
    return changed && m.state !== 'admitted' ? said.title + '. ' + lead : '';
  }

  // A visitor who never held a place here (arrived while closed or sold out) and is
  // now free to join: join, by opening the socket again (its handshake joins) or, when
  // polling, through the join API.
  function joinWhenOpen(m) {
    if (m.state !== 'not_queued' || everHadPlace || rejoining || done) return false;
    return joinNow();
  }

  function joinNow() {
    if (rejoining || done) return false;
    rejoining = true;
    setText('lead', t.connecting);
    if (polling || cfg.embed) {
      postJoin().then(function (r) { return r.ok ? r.json() : null; })
        .then(function (j) { rejoining = false; if (j) handleView(j); },
          function () { rejoining = false; });
    } else if (ws) {
      // onclose reconnects at once (see connect()).
      try { ws.close(1000); } catch (e) { rejoining = false; }
    } else {
      rejoining = false;
    }
    return true;
  }

  // POST to the join API, with the token when there is one (the widget's, or one the
  // server handed back); the page's cookie goes along. A room that asks newcomers for a
  // proof of work answers 403 with a challenge: it is solved in a worker (progress shown
  // in the lead) and the join sent again with the solution, a few times at most.
  function postJoin(solution, round, auto) {
    var fields = {};
    if (token) fields.visitor_token = token;
    // A join the widget makes on its own tells a no-show so rather than queueing them.
    if (auto) fields.rejoin = false;
    if (cfg.enqueue_token) fields.enqueue_token = cfg.enqueue_token;
    if (placeReceipt) fields.place_receipt = placeReceipt;
    var body = Object.keys(fields).length ? JSON.stringify(fields) : undefined;
    var headers = body ? { 'Content-Type': 'application/json' } : {};
    if (solution) headers['X-Anteroom-Challenge'] = solution;
    return fetch(cfg.join_path, {
      method: 'POST', credentials: 'same-origin', cache: 'no-store',
      headers: headers, body: body
    }).then(function (r) {
      if (r.status !== 403 || (round || 0) >= 3) return r;
      return r.clone().json().then(function (m) {
        if (!m || !m.challenge) return r;
        return solve(m.challenge).then(function (s) { return s ? postJoin(s, (round || 0) + 1) : r; });
      }, function () { return r; });
    });
  }

  // Solves a proof-of-work challenge in a worker; resolves to the base64 solution, or
  // null when it cannot (no worker or Web Crypto: the join then shows its refusal).
  function solve(c) {
    return new Promise(function (resolve) {
      var w;
      try { w = new Worker('/static/pow-worker.js'); } catch (e) { resolve(null); return; }
      setText('title', t.pow_title);
      setText('lead', fmt(t.pow_progress, { n: 0 }));
      w.onmessage = function (e) {
        var m = e.data;
        if (m.progress !== undefined) {
          setText('lead', fmt(t.pow_progress, { n: Math.floor(m.progress * 100) }));
          return;
        }
        w.terminate();
        if (m.number === null || m.number === undefined) { resolve(null); return; }
        setText('lead', t.connecting);
        resolve(btoa(JSON.stringify({
          algorithm: c.algorithm, challenge: c.challenge, number: m.number,
          salt: c.salt, signature: c.signature, took: m.took
        })));
      };
      w.onerror = function () { w.terminate(); resolve(null); };
      w.postMessage(c);
    });
  }

  // A newcomer in a room that asks for a proof of work: the server rendered the page
  // without joining; join here (solving first), then listen like any page.
  function verifyAndJoin() {
    conn(t.connecting);
    postJoin().then(function (r) {
      if (!r.ok) { setText('lead', t.pow_failed); conn(''); return null; }
      return r.json().then(function (m) {
        handleView(m);
        if (m.state !== 'admitted') connect();
      });
    }).catch(function () { setText('lead', t.pow_failed); conn(''); });
  }

  function handleView(m) {
    if (m.state === 'admitted' && m.redirect_url) admitted(m);
    else if (m.state) update(m);
  }

  function update(m) {
    noteTimes(m);
    if (m.place_receipt) placeReceipt = m.place_receipt;
    if (typeof m.position === 'number') {
      hasPlace = m.position > 0;
      if (hasPlace) everHadPlace = true;
    }
    if (m.support_code) {
      setText('support-code', m.support_code);
      var sc = root.querySelector('.support');
      if (sc) sc.hidden = false;
    }
    if (joinWhenOpen(m)) return;
    // One announcement per update: a new state first, then the place with it, so the
    // place never overwrites the state in the same tick.
    var said = [render(m)];
    if (WAITING[m.state]) {
      maybeFairness();
      var figures = m.figures || [];
      if (figures.indexOf('place') >= 0 && m.position !== lastPlace) {
        var now = Date.now();
        if (said[0] || m.position <= 3 || now - placeAnnouncedAt >= PLACE_ANNOUNCE_EVERY_MS) {
          said.push(fmt(plural('announce_place', t, m.position), { n: m.position }));
          placeAnnouncedAt = now;
        }
        lastPlace = m.position;
      }
      var start = Math.max(Number((store('sessionStorage') || {})[startKey] || 0), cfg.start || 0, m.position);
      try { store('sessionStorage')[startKey] = String(start); } catch (e) { /* storage off */ }
      setText('position', num(m.position));
      setText('ahead', m.state === 'paused' && m.position <= 1 ? t.ahead_none_paused : ahead(m.position));
      setText('in-line', fmt(plural('in_line', t, m.queue_length), { n: m.queue_length }));
      setText('eta', etaShown(m));
      setText('chances', chancesText(m));
      // As the server counts it: place 1 of 1 is half-way (through the door is the rest).
      var pct = Math.min(99, Math.floor((start + 1 - m.position) * 100 / (start + 1)));
      var p = $('progress');
      if (p) p.value = pct;
      boundProgress(pct);
    }
    announce(said.filter(function (x) { return x; }).join(' '));
  }

  function admitted(m) {
    if (done) return;
    done = true;
    render({ state: 'admitted', message: 'admitted', figures: [], notes: [] });
    announce(t.title_admitted + '. ' + t.lead_admitted);
    var p = $('progress');
    if (p) p.value = 100;
    boundProgress(100);
    document.title = fmt(t.tab_title_admitted, { room: cfg.room_name });
    if (document.hidden && window.Notification && Notification.permission === 'granted') {
      try { new Notification(t.notify_title, { body: fmt(t.notify_body, { room: cfg.room_name }) }); } catch (e) { /* ignore */ }
    }
    var link = $('continue-link');
    if (link) link.href = m.redirect_url;
    bound('continue', function (e) { e.href = m.redirect_url; e.hidden = false; });
    show('continue', true);
    if (ws) { try { ws.close(1000); } catch (e) { /* closed */ } }
    if (cfg.embed) {
      // Only to the exact parent origin the server vetted, never "*".
      window.parent.postMessage({ type: 'anteroom:admitted', pass: m.pass, redirect_url: m.redirect_url }, cfg.parent_origin);
    } else {
      location.replace(m.redirect_url);
    }
  }

  var closedFlip = false;
  function handle(m) {
    if (m.type !== 'closed') closedFlip = false;
    switch (m.type) {
      case 'status': update(m); break;
      case 'admitted': admitted(m); break;
      // A room's state flips come with a status (which says what to show), but for a
      // room deleted under the socket: then `closed` is the last word.
      case 'closed': closedFlip = true; break;
      default: break; // the other flips, pong and future message types
    }
  }

  function wsUrl() {
    var u = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + cfg.ws_path;
    if (token) u += (u.indexOf('?') < 0 ? '?' : '&') + 'token=' + encodeURIComponent(token);
    return u;
  }

  function backoff() {
    // Full jitter: 250 ms plus uniform in [0, min(cap, base * 2^attempt)].
    var ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * Math.pow(2, attempt));
    attempt++;
    return Math.floor(Math.random() * ceiling) + 250;
  }

  function connect() {
    if (done) return;
    var sock;
    try { sock = new WebSocket(wsUrl()); } catch (e) { return onWsFail(); }
    ws = sock;
    lastFrameAt = Date.now();
    sock.onopen = function () {
      everOpened = true;
      attempt = 0;
      failures = 0;
      polling = false;
      conn(t.live);
    };
    sock.onmessage = function (e) {
      lastFrameAt = Date.now();
      var m;
      try { m = JSON.parse(e.data); } catch (err) { return; }
      // A pong says the socket is open, not that the room's news arrives: only the
      // server's own messages count as updates (an outage of its store stops them).
      if (m.type !== 'pong') {
        lastUpdateAt = Date.now();
        touched();
        if (ws === sock && $('conn') && !$('conn').classList.contains('live')) conn(t.live);
      }
      handle(m);
    };
    sock.onclose = function () {
      if (ws === sock) ws = null;
      if (closedFlip && !rejoining) {
        render({ state: 'closed', message: hasPlace ? 'closed_kept' : 'closed', figures: [], notes: [] });
        conn('');
        return;
      }
      if (rejoining) { rejoining = false; connect(); return; }
      if (!done) onWsFail();
    };
  }

  function onWsFail() {
    if (done) return;
    failures++;
    if (!everOpened && failures >= WS_FAILURES_BEFORE_POLLING) {
      if (!polling) { polling = true; conn(t.polling); poll(); }
      // Keep trying the socket now and then.
      setTimeout(connect, BACKOFF_CAP_MS);
      return;
    }
    // "Your place is held" only to a visitor who holds one.
    if (hasPlace) conn(t.reconnecting); else notLive();
    setTimeout(connect, backoff());
  }

  function authHeaders() {
    return token ? { Authorization: 'Bearer ' + token } : {};
  }

  // One status read now (the opening second), besides the polling rhythm.
  function pollNow() {
    if (done) return;
    fetch(cfg.status_path, { credentials: 'same-origin', headers: authHeaders(), cache: 'no-store' })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (m) { if (m) { touched(); handleView(m); } }, function () { /* the rhythm goes on */ });
  }

  function poll() {
    if (done || !polling) return;
    fetch(cfg.status_path, { credentials: 'same-origin', headers: authHeaders(), cache: 'no-store' })
      .then(function (r) {
        if (r.status === 429) {
          var wait = Number(r.headers.get('Retry-After') || 5) * 1000;
          setTimeout(poll, Math.max(wait, POLL_MS));
          return null;
        }
        return r.json().then(function (m) {
          touched();
          handleView(m);
          setTimeout(poll, POLL_MS);
        });
      })
      .catch(function () { setTimeout(poll, POLL_MS * 2); });
  }

  // Application heartbeat: keeps proxies from idling the socket out and notices a dead
  // server quickly (the server also pings at the protocol level).
  setInterval(function () {
    if (!ws || ws.readyState !== 1) return;
    if (Date.now() - lastFrameAt > SILENCE_MS) { ws.close(); return; }
    try { ws.send('{"type":"ping"}'); } catch (e) { /* closing */ }
  }, PING_EVERY_MS);
  setInterval(function () {
    if (done || polling || !ws || ws.readyState !== 1) return;
    if (Date.now() - lastUpdateAt > STALE_MS && $('conn') && $('conn').classList.contains('live')) notLive();
  }, 1000);

  // "Got it": a sticky note goes once read.
  var dismiss = $('dismiss');
  if (dismiss) {
    dismiss.addEventListener('click', function () {
      sticky = [];
      renderNotes(shownNotes.filter(function (c) { return (cfg.sticky_notes || []).indexOf(c) < 0; }));
    });
  }

  // "Notify me" button.
  function notifyUsable() {
    return !cfg.embed && !!window.Notification && Notification.permission !== 'denied';
  }
  var notify = $('notify');
  if (notify && notifyUsable()) {
    notify.hidden = !(cfg.state === 'queued' || cfg.state === 'paused');
    if (Notification.permission === 'granted') notify.textContent = t.notify_on;
    notify.addEventListener('click', function () {
      Notification.requestPermission().then(function (p) {
        notify.textContent = p === 'granted' ? t.notify_on : t.notify_denied;
      });
    });
  }
  document.addEventListener('visibilitychange', function () {
    if (!document.hidden && done) document.title = baseTitle;
  });
  // A page in the background (a hidden tab, a locked phone) may stop running, and its
  // socket with it: say so, and the server holds a queued place for longer without a
  // heartbeat (reaper.hidden_grace_secs). sendBeacon still goes out as the page hides.
  document.addEventListener('visibilitychange', function () {
    if (!document.hidden || !navigator.sendBeacon) return;
    if (cfg.state !== 'queued' && cfg.state !== 'paused') return;
    try { navigator.sendBeacon(cfg.away_path, token || ''); } catch (e) { /* best effort */ }
  });

  // Embed: join with the token kept in this frame's storage, then connect.
  function embedJoin() {
    var ls = store('localStorage');
    try { token = ls && ls.getItem(tokenKey); } catch (e) { token = null; }
    postJoin(undefined, 0, true).then(function (r) {
      if (r.status === 401) {
        return r.json().then(function (m) { return m && m.error && m.error.code || ''; },
          function () { return ''; }).then(function (code) {
          if (code.indexOf('token_') === 0) {
            // The site's enqueue token is missing, expired or not this line's: say so
            // (retrying cannot help).
            setText('title', t.err_entry);
            setText('lead', t.err_entry_lead);
            conn('');
            return;
          }
          if (token) {
            // A stale visitor token (keys rotated): start afresh.
            try { ls.removeItem(tokenKey); } catch (e) { /* ignore */ }
            token = null;
            return embedJoin();
          }
          conn(t.reconnecting); setTimeout(embedJoin, backoff());
        });
      }
      if (r.status === 503) {
        // The store is busy: keep the identity the join was made under, so the retry
        // finds the place a late join may have made.
        return r.json().then(function (m) {
          if (m && m.visitor_token) {
            token = m.visitor_token;
            try { ls.setItem(tokenKey, token); } catch (e) { /* storage blocked */ }
          }
        }, function () { /* no body */ }).then(function () {
          conn(t.reconnecting); setTimeout(embedJoin, backoff());
        });
      }
      if (!r.ok) { conn(t.reconnecting); setTimeout(embedJoin, backoff()); return; }
      return r.json().then(function (m) {
        token = m.visitor_token;
        try { ls.setItem(tokenKey, token); } catch (e) { /* storage blocked */ }
        if (m.state === 'admitted') { admitted(m); return; }
        update(m);
        // A no-show is told so; the button joins them again (no socket until then: its
        // handshake would not join them either).
        if (m.state === 'no_show') { conn(''); return; }
        connect();
      });
    }).catch(function () { conn(t.reconnecting); setTimeout(embedJoin, backoff()); });
  }

  // Parent messages are never trusted unless they come from the vetted origin.
  window.addEventListener('message', function (e) {
    if (!cfg.embed || e.origin !== cfg.parent_origin) return;
    /* no commands are accepted from the parent yet */
  });

  if (COUNTING[cfg.state]) countdown(true);

  var rejoin = $('rejoin-button');
  if (rejoin) rejoin.addEventListener('click', function () {
    if (cfg.state !== 'no_show') { location.reload(); return; }
    // The widget's no-show chose to join again: at the back of the line.
    postJoin().then(function (r) { return r.ok ? r.json() : null; }).then(function (m) {
      if (!m) { location.reload(); return; }
      update(m);
      if (m.state === 'admitted') admitted(m); else connect();
    }, function () { location.reload(); });
  });

  if (cfg.embed) {
    setText('keep-open', cfg.keep_open);
    // Tell the host page how tall the widget is, so the iframe never scrolls.
    var lastHeight = 0;
    var report = function () {
      var h = Math.ceil(document.documentElement.scrollHeight);
      if (h !== lastHeight) {
        lastHeight = h;
        window.parent.postMessage({ type: 'anteroom:resize', height: h }, cfg.parent_origin);
      }
    };
    if (window.ResizeObserver) new ResizeObserver(report).observe(document.body);
    report();
    embedJoin();
  } else if (cfg.pow_check) {
    verifyAndJoin();
  } else if (cfg.state !== 'not_queued' && cfg.state !== 'no_show' && cfg.state !== 'admitted') {
    // Waiting, paused, closed or sold out: keep listening, so the page moves on by
    // itself (no reload is ever needed). A no-show is told so and joins again only by
    // the button (the socket's handshake would join them at once).
    conn(t.connecting);
    connect();
  } else {
    conn('');
  }
})();
