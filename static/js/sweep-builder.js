// Sweep builder: show only the value pickers that fit each axis's field (catalog list for chips,
// servers and presets; range or list for numbers). Without JavaScript all pickers stay visible and
// the server uses the one that matches the field.
(function () {
  "use strict";
  var form = document.getElementById("sweep-builder");
  if (!form) return;
  var CATALOG = {"hardware.accelerator": "accelerators", "hardware.server": "servers", "model.preset": "presets"};
  form.querySelectorAll("fieldset.axis").forEach(function (box) {
    var select = box.querySelector("select[name$='_field']");
    function sync() {
      var field = select.value;
      var kind = CATALOG[field] || (field ? "numbers" : "");
      box.querySelectorAll(".axis-values").forEach(function (el) {
        el.hidden = !el.classList.contains("axis-" + kind);
      });
    }
    select.addEventListener("change", sync);
    sync();
  });
})();
