// Draws each report chart from the Plotly figure JSON the server embedded next to it.
(function () {
  "use strict";
  document.documentElement.classList.add("js");
  function draw() {
    if (!window.Plotly) return;
    document.querySelectorAll("[data-figure]").forEach(function (el) {
      var src = document.getElementById(el.dataset.figure);
      if (!src) return;
      var fig = JSON.parse(src.textContent);
      Plotly.newPlot(el, fig.data, fig.layout, {
        responsive: true, displaylogo: false,
        toImageButtonOptions: {format: "png", filename: el.id}
      });
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", draw); else draw();
  // Print at the page width: charts re-layout to the paper before printing.
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll(".js-plotly-plot").forEach(function (el) { Plotly.Plots.resize(el); });
  });
})();
