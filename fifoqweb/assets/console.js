// fifoq console: refreshes the counts of the page every two seconds from counts.json. The page works
// without this script; it only saves the reloads.
(function () {
  "use strict";
  var cells = document.querySelectorAll("[data-f]");
  if (!cells.length || !window.fetch) { return; }
  function refresh() {
    if (document.hidden) { return; }
    fetch("counts.json", {cache: "no-store", credentials: "same-origin"})
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (all) {
        if (!all) { return; }
        cells.forEach(function (el) {
          var q = all[el.dataset.q];
          var v = q && q[el.dataset.f];
          if (v !== undefined && v !== "" && el.textContent !== v) { el.textContent = v; }
        });
      })
      .catch(function () {});
  }
  setInterval(refresh, 2000);
}());
