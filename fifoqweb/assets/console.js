// fifoq console: refreshes the counts of the page every two seconds from counts.json, and redraws its
// charts from the server when a new sample was taken. The page works without this script; it only saves
// the reloads.
(function () {
  "use strict";
  var cells = document.querySelectorAll("[data-f]");
  var charts = document.querySelectorAll("[data-chart]");
  if ((!cells.length && !charts.length) || !window.fetch) { return; }
  var sampled = null;
  function redraw() {
    charts.forEach(function (el) {
      fetch(el.dataset.chart, {cache: "no-store", credentials: "same-origin"})
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (svg) { if (svg) { el.innerHTML = svg; } })
        .catch(function () {});
    });
  }
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
        var s = all[""] && all[""].sampled;
        if (sampled !== null && s !== sampled) { redraw(); }
        sampled = s;
      })
      .catch(function () {});
  }
  refresh();
  setInterval(refresh, 2000);
}());
