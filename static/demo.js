// Demo origin: release the pass without leaving the page.
(function () {
  var form = document.getElementById('release');
  if (!form) return;
  form.addEventListener('submit', function (e) {
    e.preventDefault();
    fetch(form.action, { method: 'POST', credentials: 'same-origin' }).then(function () {
      location.href = form.dataset.next;
    });
  });
})();
