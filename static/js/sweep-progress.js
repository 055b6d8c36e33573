// Live progress of a running sweep: polls the status API and reloads the page when it ends.
(function () {
  "use strict";
  var box = document.getElementById("sweep");
  if (!box) return;
  var url = box.dataset.statusUrl;
  function fmt(n) { return n.toLocaleString(document.documentElement.lang || undefined); }
  function poll() {
    fetch(url, {headers: {"Accept": "application/json"}, credentials: "same-origin"})
      .then(function (r) { return r.json(); })
      .then(function (s) {
        var p = s.progress || {done: 0, total: 1};
        document.getElementById("sweep-progress").value = p.done;
        document.getElementById("sweep-done").textContent = fmt(p.done);
        document.getElementById("sweep-percent").textContent = Math.floor(100 * p.done / Math.max(p.total, 1));
        if (s.status !== "queued" && s.status !== "running") { window.location.reload(); return; }
        setTimeout(poll, 1000);
      })
      .catch(function () { setTimeout(poll, 3000); });
  }
  setTimeout(poll, 500);
})();
