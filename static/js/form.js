// Progressive enhancement of the estimate form: show only the fields of the chosen model source
// and sizing mode. Without JavaScript every field stays visible and the form still submits.
(function () {
  "use strict";
  var form = document.querySelector(".estimate-form");
  if (!form) return;
  form.classList.add("js");
  function sync(name, prefix) {
    var checked = form.querySelector('input[name="' + name + '"]:checked');
    var value = checked ? checked.value : null;
    form.querySelectorAll(".when").forEach(function (el) {
      var mine = Array.prototype.some.call(el.classList, function (c) { return c.indexOf("when-") === 0; }) &&
        el.dataset.group === name;
      if (mine) el.hidden = !el.classList.contains("when-" + value);
    });
  }
  var groups = {model_source: ["preset", "config", "params"], sizing: ["deadline", "cards", "budget"]};
  Object.keys(groups).forEach(function (name) {
    groups[name].forEach(function (v) {
      form.querySelectorAll(".when-" + v).forEach(function (el) { el.dataset.group = name; });
    });
    form.querySelectorAll('input[name="' + name + '"]').forEach(function (input) {
      input.addEventListener("change", function () { sync(name); });
    });
    sync(name);
  });
})();
