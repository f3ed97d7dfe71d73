// Demo origin: take the pass out of the address bar (it stays in the cookie, and a URL
// with a pass in it should not be bookmarked or shared), and release the pass without
// leaving the page.
(function () {
  if (window.history && history.replaceState && /[?&]anteroom_pass=/.test(location.search)) {
    var u = new URL(location.href);
    u.searchParams.delete('anteroom_pass');
    history.replaceState(null, '', u.pathname + u.search + u.hash);
  }
  var form = document.getElementById('release');
  if (!form) return;
  form.addEventListener('submit', function (e) {
    e.preventDefault();
    fetch(form.action, { method: 'POST', credentials: 'same-origin' }).then(function () {
      location.href = form.dataset.next;
    });
  });
})();
