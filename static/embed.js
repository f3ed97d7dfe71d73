// Anteroom embed: <script src="https://QUEUE/static/embed.js" data-room="ROOM"></script>
// Creates the waiting-room iframe where the tag stands. When the visitor is admitted the
// widget posts {type: "anteroom:admitted", pass, redirect_url} to this page (only to
// this page's exact origin; it also posts {type: "anteroom:resize", height} so the frame
// fits its content); we then:
//   - call window[data-on-admitted](detail) if that attribute names a function, else
//   - dispatch a cancelable "anteroom:admitted" event on document, and unless a
//     listener called preventDefault() (or data-redirect="false"), go to redirect_url.
(function () {
  var script = document.currentScript;
  if (!script) return;
  var room = script.getAttribute('data-room');
  var queueOrigin = new URL(script.src).origin;
  var frame = document.createElement('iframe');
  var src = queueOrigin + '/embed/' + encodeURIComponent(room) +
    '?parent=' + encodeURIComponent(location.origin);
  var lang = script.getAttribute('data-lang');
  if (lang) src += '&lang=' + encodeURIComponent(lang);
  // A room that lets people in line with the site's enqueue token (one place per person,
  // priority lanes): the widget's join brings it.
  var enqueueToken = script.getAttribute('data-enqueue-token');
  if (enqueueToken) src += '&enqueue_token=' + encodeURIComponent(enqueueToken);
  frame.src = src;
  frame.title = script.getAttribute('data-title') || 'Waiting room';
  frame.setAttribute('data-anteroom', room);
  frame.style.border = '0';
  frame.style.width = script.getAttribute('data-width') || '100%';
  frame.style.maxWidth = '560px';
  frame.style.height = script.getAttribute('data-height') || '360px';
  frame.style.colorScheme = 'normal';
  script.parentNode.insertBefore(frame, script.nextSibling);

  // A site the room does not allow: the frame is refused by the browser (a grey box
  // with no word to anyone), so ask the queue whether this site may show the room and,
  // if not, put the queue's explanation where the frame was: the shop owner sees why.
  if (window.fetch) {
    var check = queueOrigin + '/api/rooms/' + encodeURIComponent(room) + '/embeddable?origin=' +
      encodeURIComponent(location.origin) + (lang ? '&lang=' + encodeURIComponent(lang) : '');
    fetch(check, { credentials: 'omit', cache: 'no-store' }).then(function (r) {
      return r.ok ? r.json() : null;
    }).then(function (a) {
      if (!a || a.allowed !== false || !frame.parentNode) return;
      var box = document.createElement('div');
      box.setAttribute('role', 'alert');
      box.setAttribute('data-anteroom-refused', room);
      box.style.cssText = 'max-width:560px;padding:12px 16px;border:2px solid #b3261e;' +
        'border-radius:8px;background:#fff;color:#1c1b1f;font:16px/1.4 system-ui,sans-serif';
      var h = document.createElement('strong');
      h.textContent = a.title || '';
      var p = document.createElement('p');
      p.style.margin = '6px 0 0';
      p.textContent = a.message || '';
      box.appendChild(h);
      box.appendChild(p);
      frame.parentNode.replaceChild(box, frame);
    }, function () { /* the queue cannot be asked: the frame stays as it is */ });
  }

  window.addEventListener('message', function (e) {
    if (e.origin !== queueOrigin || e.source !== frame.contentWindow) return;
    var d = e.data;
    if (d && d.type === 'anteroom:resize' && typeof d.height === 'number') {
      frame.style.height = Math.max(120, Math.min(1200, d.height)) + 'px';
      return;
    }
    if (!d || d.type !== 'anteroom:admitted' || typeof d.redirect_url !== 'string') return;
    var detail = { room: room, pass: d.pass, redirect_url: d.redirect_url };
    var cbName = script.getAttribute('data-on-admitted');
    if (cbName && typeof window[cbName] === 'function') {
      window[cbName](detail);
      return;
    }
    var ev = new CustomEvent('anteroom:admitted', { detail: detail, cancelable: true });
    var proceed = document.dispatchEvent(ev);
    if (proceed && script.getAttribute('data-redirect') !== 'false') {
      location.href = d.redirect_url;
    }
  });
})();
