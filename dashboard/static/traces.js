// The Trace page's collapsible subtrees. The rows come depth-first, so a span's
// subtree is the run of deeper rows after it. Which spans are collapsed lives in the
// URL (`collapsed=<span id>,…`), and so does the span opened last (`span=<id>`); the
// server reads both: a reload or a shared link shows the same tree.
(function () {
  "use strict";
  var rows = Array.prototype.slice.call(document.querySelectorAll(".waterfall details.span"));
  if (!rows.length) { return; }
  var params = new URLSearchParams(window.location.search);
  var collapsed = new Set((params.get("collapsed") || "").split(",").filter(Boolean));

  function apply() {
    var below = null;
    rows.forEach(function (row) {
      var level = Number(row.dataset.level);
      if (below !== null && level > below) { row.hidden = true; return; }
      below = null;
      row.hidden = false;
      var toggle = row.querySelector(".wf-toggle");
      var shut = toggle !== null && collapsed.has(row.dataset.spanId);
      row.classList.toggle("collapsed", shut);
      if (toggle) {
        toggle.setAttribute("aria-expanded", shut ? "false" : "true");
        toggle.textContent = shut ? "\u25B8" : "\u25BE";
      }
      if (shut) { below = level; }
    });
  }

  var opened = params.get("span");

  function remember() {
    var next = new URLSearchParams(window.location.search);
    if (collapsed.size) { next.set("collapsed", Array.from(collapsed).join(",")); }
    else { next.delete("collapsed"); }
    if (opened) { next.set("span", opened); } else { next.delete("span"); }
    var query = next.toString();
    window.history.replaceState(null, "", window.location.pathname + (query ? "?" + query : "") +
                                window.location.hash);
  }

  rows.forEach(function (row) {
    row.addEventListener("toggle", function () {
      if (row.open) { opened = row.dataset.spanId; }
      else if (opened === row.dataset.spanId) { opened = null; }
      remember();
    });
  });

  document.querySelector(".waterfall").addEventListener("click", function (event) {
    var toggle = event.target.closest(".wf-toggle");
    if (!toggle) { return; }
    event.preventDefault();  // a click in a <summary> would open the span's details
    var id = toggle.closest("details.span").dataset.spanId;
    if (collapsed.has(id)) { collapsed.delete(id); } else { collapsed.add(id); }
    apply();
    remember();
  });
})();
