// The rate-limit page: counts down the Retry-After the server gave, then loads the
// page again by itself (the meta refresh does the same without scripts).
(function () {
  'use strict';
  var el = document.getElementById('retry-in');
  if (!el) return;
  var left = Number(el.getAttribute('data-secs')) || 1;
  var text = el.getAttribute('data-text');
  var url = el.getAttribute('data-url');
  var until = Date.now() + left * 1000;
  // The seconds in the page's own digits (Arabic-Indic in Arabic, as the server wrote them).
  var lang = document.documentElement.lang || 'en';
  var nf = null;
  try { nf = new Intl.NumberFormat(lang, { useGrouping: false }); } catch (e) { /* digits as they are */ }
  function tick() {
    var s = Math.max(0, Math.ceil((until - Date.now()) / 1000));
    el.textContent = text.replace('{n}', nf ? nf.format(s) : s);
    if (s === 0) {
      if (url) location.replace(url);
      return;
    }
    setTimeout(tick, 250);
  }
  tick();
})();
