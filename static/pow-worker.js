// Anteroom proof-of-work solver (ALTCHA's format), run in a Web Worker so the page stays
// responsive: finds n in [0, maxnumber] with hex(SHA-256(salt + n)) === challenge, and
// reports progress as it goes. Needs Web Crypto, which browsers give only to secure
// contexts (HTTPS or localhost, and an embedding page that is one too); without it the
// answer is {number: null, error} at once, so the page says it could not check.
'use strict';
function hex(buf) {
  var b = new Uint8Array(buf), s = '';
  for (var i = 0; i < b.length; i++) s += (b[i] < 16 ? '0' : '') + b[i].toString(16);
  return s;
}
self.onmessage = function (e) {
  solve(e.data).catch(function (err) {
    self.postMessage({ number: null, error: String(err && err.message || err) });
  });
};
async function solve(c) {
  var enc = new TextEncoder();
  var started = Date.now();
  var BATCH = 256;
  for (var n = 0; n <= c.maxnumber; n += BATCH) {
    var last = Math.min(n + BATCH - 1, c.maxnumber);
    var tries = [];
    for (var k = n; k <= last; k++) tries.push(crypto.subtle.digest('SHA-256', enc.encode(c.salt + k)));
    var digests = await Promise.all(tries);
    for (var j = 0; j < digests.length; j++) {
      if (hex(digests[j]) === c.challenge) {
        self.postMessage({ number: n + j, took: Date.now() - started });
        return;
      }
    }
    if ((n / BATCH) % 16 === 0) self.postMessage({ progress: last / c.maxnumber });
  }
  self.postMessage({ number: null });
}
