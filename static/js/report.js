// Draws each chart from the Plotly figure JSON the server embedded next to it (a
// <script type="application/json"> block), and wires the report's buttons. No inline scripts or
// handlers in the templates, so a strict Content-Security-Policy holds.
(function () {
  "use strict";
  document.documentElement.classList.add("js");
  // Nothing leaves the page: no Plotly logo, link, cloud or Chart Studio buttons.
  var CONFIG = {
    responsive: true, displaylogo: false, showLink: false, showSendToCloud: false,
    showEditInChartStudio: false, plotlyServerURL: "",
    modeBarButtonsToRemove: ["sendDataToCloud", "editInChartStudio", "lasso2d", "select2d"]
  };
  window.ClusterPlanChartConfig = CONFIG;
  function draw() {
    if (!window.Plotly) return;
    document.querySelectorAll("[data-figure]").forEach(function (el) {
      var src = document.getElementById(el.dataset.figure);
      if (!src) return;
      var fig = JSON.parse(src.textContent);
      var lang = (document.documentElement.lang || "").toLowerCase().indexOf("zh") === 0 ? "zh-CN" : "en";
      var config = Object.assign({}, CONFIG, {locale: lang, toImageButtonOptions: {format: "png", filename: el.id}});
      Plotly.newPlot(el, fig.data, fig.layout, config);
    });
  }
  function wire() {
    document.querySelectorAll(".select-on-focus").forEach(function (el) {
      el.addEventListener("focus", function () { el.select(); });
      el.addEventListener("click", function () { el.select(); });
    });
    var print = document.getElementById("print-button");
    if (print) print.addEventListener("click", function () { window.print(); });
    draw();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", wire); else wire();
  // Print at the page width: charts re-layout to the paper before printing.
  window.addEventListener("beforeprint", function () {
    if (!window.Plotly) return;
    document.querySelectorAll(".js-plotly-plot").forEach(function (el) { Plotly.Plots.resize(el); });
  });
})();
