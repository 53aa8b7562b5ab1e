/* Sounding dashboard: charts (uPlot), deploy markers, sparklines, waterfall layout,
 * the Logs page's live tail.
 *
 * Everything that came from a client is put into the page with textContent or
 * setAttribute, never as HTML. Chart data comes from the read API (data-src) or from
 * a data-json attribute the server wrote (autoescaped). No inline script runs: the
 * Content-Security-Policy allows scripts from /static only. */
(function () {
  "use strict";

  var COLORS = { count: "#4c7bd9", errors: "#c4372b", p50: "#2e9b8f", p95: "#d08a2a",
                 p99: "#8a5cc9", spark: "#c4372b" };
  var METRIC_COLORS = ["#4c7bd9", "#d08a2a", "#2e9b8f", "#8a5cc9", "#c4372b", "#5b8c2a",
                       "#b0489a", "#3d9bc4", "#7a6a3a", "#66707c"];
  var HEIGHT = 190;
  var charts = [];
  var pending = {};

  function utc(ts) { return uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"); }

  function load(node) {
    if (node.dataset.json) return Promise.resolve(JSON.parse(node.dataset.json));
    var src = node.dataset.src;
    if (!pending[src]) {
      pending[src] = fetch(src, { credentials: "same-origin",
                                  headers: { Accept: "application/json" } })
        .then(function (r) {
          if (!r.ok) throw new Error("the read API answered " + r.status);
          return r.json();
        });
    }
    return pending[src];
  }

  function fmtTime(tsUs) {
    return new Date(tsUs / 1000).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
  }

  function line(label, color, fmt, extra) {
    var s = { label: label, stroke: color, width: 1.5, value: function (u, v) {
      return v == null ? "\u2014" : fmt(v); } };
    for (var k in extra || {}) s[k] = extra[k];
    return s;
  }

  var KINDS = {
    throughput: function (s) {
      return { series: [line("requests/min", COLORS.count, function (v) { return v.toFixed(1); },
                             { fill: "rgba(76,123,217,0.12)" })],
               data: [s.t, s.throughput_rpm] };
    },
    errors: function (s) {
      return { series: [line("error rate", COLORS.errors, function (v) { return v.toFixed(2) + "%"; },
                             { fill: "rgba(196,55,43,0.10)" })],
               data: [s.t, s.error_rate.map(function (v) { return v == null ? null : v * 100; })] };
    },
    latency: function (s) {
      var ms = function (v) { return v.toFixed(1) + " ms"; };
      return { series: [line("p50", COLORS.p50, ms), line("p95", COLORS.p95, ms),
                        line("p99", COLORS.p99, ms)],
               data: [s.t, s.p50_ms, s.p95_ms, s.p99_ms] };
    },
    /* One line per group of a metric (storage/queries/metrics.py); labels are the
     * group's attribute value, which uPlot's legend writes as text. */
    metric: function (s) {
      var unit = s.aggregation === "rate" ? (s.unit || "") + "/s"
        : (s.aggregation === "count" ? "" : s.unit || "");
      var fmt = function (v) {
        var text = Math.abs(v) >= 1000 || v === Math.round(v) ? String(Math.round(v * 100) / 100)
          : v.toPrecision(4);
        return unit ? text + " " + unit : text;
      };
      var series = s.groups.map(function (g, i) {
        var label = s.group_by == null ? s.name + " (" + s.aggregation + ")"
          : s.group_by + "=" + (g.group == null ? "(none)" : g.group);
        return line(label, METRIC_COLORS[i % METRIC_COLORS.length], fmt,
                    { spanGaps: false, points: { show: true, size: 4 } });
      });
      return { series: series,
               data: [s.t].concat(s.groups.map(function (g) { return g.values; })),
               range: function (u, min, max) {
                 if (min == null || max == null) return [0, 1];
                 var lo = Math.min(0, min), hi = max > lo ? max * (max > 0 ? 1.1 : 0.9) : lo + 1;
                 return [lo, hi];
               } };
    },
    trend: function (s) {
      return { series: [line("events", COLORS.errors, function (v) { return String(v); },
                             { fill: "rgba(196,55,43,0.55)", paths: uPlot.paths.bars({ size: [0.8, 24] }) })],
               data: [s.t, s.count] };
    },
    /* A release's sessions per step (dashboard/releases.py). */
    sessions: function (s) {
      return { series: [line("sessions", COLORS.count, function (v) { return String(v); },
                             { fill: "rgba(76,123,217,0.35)", paths: uPlot.paths.bars({ size: [0.8, 24] }) })],
               data: [s.t, s.count] };
    }
  };

  /* A tooltip beside its marker: GAP px to its right, or to its left when it would
   * cross the chart's right edge, measured from the tooltip's own width (a fixed guess
   * left it ~150 px away from narrow tooltips); never past either edge of the chart. */
  var GAP = 8;
  function placeTip(tip, marker, host) {
    var hostBox = host.getBoundingClientRect();
    var box = marker.getBoundingClientRect();
    tip.style.left = "0px";  // measured where it has the whole width to shrink-fit in
    var width = tip.offsetWidth;
    var x = box.left + box.width / 2 - hostBox.left;  // the marker's line
    var left = x + GAP;
    if (left + width > hostBox.width) left = x - GAP - width;
    left = Math.max(0, Math.min(left, hostBox.width - width));
    tip.style.left = left + "px";
    tip.style.top = (box.top - hostBox.top + 8) + "px";
  }

  /* Deploy markers: one absolutely placed element per deploy over the plot, so each can
   * be hovered (details in a tooltip) and found in the page; redrawn with the chart. */
  function deployMarkers(deploys, host) {
    var tip = null;
    function hide() { if (tip) { tip.remove(); tip = null; } }
    function show(u, marker, d) {
      hide();
      tip = document.createElement("div");
      tip.className = "deploy-tip";
      tip.setAttribute("role", "tooltip");
      var rows = [["tip-title", "Deploy " + d.git_sha.slice(0, 12)],
                  ["", d.version ? "version " + d.version : ""],
                  ["", d.env ? "env " + d.env : ""],
                  ["", d.service ? "service " + d.service : ""],
                  ["", d.deployer ? "by " + d.deployer : ""],
                  ["", fmtTime(d.ts_us)],
                  ["tip-description", d.description || ""]];
      rows.forEach(function (r) {
        if (!r[1]) return;
        var div = document.createElement("div");
        div.className = r[0];
        div.textContent = r[1];
        tip.appendChild(div);
      });
      host.appendChild(tip);
      placeTip(tip, marker, host);
    }
    function place(u) {
      hide();
      u.over.querySelectorAll(".deploy-marker").forEach(function (n) { n.remove(); });
      var min = u.scales.x.min, max = u.scales.x.max;
      deploys.forEach(function (d) {
        var t = d.ts_us / 1e6;
        if (t < min || t > max) return;
        var m = document.createElement("div");
        m.className = "deploy-marker";
        m.style.left = u.valToPos(t, "x") + "px";
        m.setAttribute("data-sha", d.git_sha);
        m.setAttribute("aria-label", "Deploy " + d.git_sha);
        m.tabIndex = 0;
        m.addEventListener("mouseenter", function () { show(u, m, d); });
        m.addEventListener("focus", function () { show(u, m, d); });
        m.addEventListener("mouseleave", hide);
        m.addEventListener("blur", hide);
        u.over.appendChild(m);
      });
    }
    return { hooks: { draw: [place] } };
  }

  function drawChart(node) {
    var kind = KINDS[node.dataset.kind];
    if (!kind) return;
    load(node).then(function (doc) {
      var spec = kind(doc.series);
      var opts = {
        width: Math.max(node.clientWidth, 200), height: HEIGHT, tzDate: utc,
        series: [{ label: "time (UTC)" }].concat(spec.series),
        scales: { x: { time: true }, y: { range: spec.range || function (u, min, max) {
          return [0, max > 0 ? max * 1.1 : 1]; } } },
        axes: [{}, { size: 56 }],
        cursor: { sync: { key: "sounding" } },
        plugins: [deployMarkers(doc.deploys || [], node)]
      };
      charts.push({ node: node, plot: new uPlot(opts, spec.data, node) });
      node.setAttribute("data-ready", "true");
    }).catch(function (err) {
      var p = document.createElement("p");
      p.className = "chart-problem";
      p.textContent = "Could not draw this chart: " + err.message;
      node.appendChild(p);
    });
  }

  function drawSpark(node) {
    var values = JSON.parse(node.dataset.spark);
    var xs = values.map(function (_, i) { return i; });
    new uPlot({
      width: 120, height: 28, legend: { show: false }, cursor: { show: false },
      select: { show: false },
      scales: { x: { time: false }, y: { range: function (u, min, max) {
        return [0, Math.max(1, max)]; } } },
      axes: [{ show: false }, { show: false }],
      series: [{}, { stroke: COLORS.spark, fill: "rgba(196,55,43,0.45)", width: 0,
                     paths: uPlot.paths.bars({ size: [0.85, 10], gap: 1 }) }]
    }, [xs, values], node);
  }

  function layoutWaterfall() {
    document.querySelectorAll(".wf-bar[data-offset]").forEach(function (bar) {
      bar.style.left = bar.dataset.offset + "%";
      bar.style.width = bar.dataset.width + "%";
    });
    document.querySelectorAll(".wf-log[data-offset]").forEach(function (mark) {
      mark.style.left = mark.dataset.offset + "%";
    });
    document.querySelectorAll("[data-depth]").forEach(function (n) {
      n.style.paddingLeft = (Number(n.dataset.depth) * 16) + "px";
    });
  }

  /* The live tail: asks the read API for the records after the newest one shown (the
   * same filters, an `after` cursor), every TAIL_MS while it runs, and puts them on
   * top, built as dashboard/templates/_log.html draws a record. */
  var TAIL_MS = 2000;
  var TAIL_BATCH = 200;
  var TAIL_MAX_ROWS = 1000;
  var SEVERITY = [[21, "FATAL"], [17, "ERROR"], [13, "WARN"], [9, "INFO"], [5, "DEBUG"], [1, "TRACE"]];

  function severityOf(n) {
    for (var i = 0; i < SEVERITY.length; i++) {
      if (n >= SEVERITY[i][0] && n <= 24) {
        var step = n - SEVERITY[i][0] + 1;
        return SEVERITY[i][1] + (step > 1 ? step : "");
      }
    }
    return "";
  }

  function el(tag, className, text) {
    var n = document.createElement(tag);
    if (className) n.className = className;
    if (text != null) n.textContent = text;
    return n;
  }

  function logNode(item, traceBase) {
    var name = severityOf(item.severity_number);
    var node = el("details", "log tail-added sev-" + (name.replace(/[234]$/, "").toLowerCase() || "unset"));
    node.setAttribute("data-key", item.id);
    var summary = el("summary");
    var when = new Date(Math.floor(item.time_ns / 1e6));
    summary.appendChild(el("time", "log-time", isNaN(when) ? String(item.time_ns)
      : when.toISOString().replace("T", " ").replace("Z", " UTC")));
    summary.appendChild(el("span", "badge severity", item.severity_text || name || "\u2014"));
    summary.appendChild(el("span", "log-service", item.service_name));
    var body = el("span", "log-body");
    if (item.event_name) body.appendChild(el("span", "event-name", item.event_name + " "));
    body.appendChild(document.createTextNode(typeof item.body === "string" ? item.body
      : item.body == null ? "" : JSON.stringify(item.body)));
    summary.appendChild(body);
    node.appendChild(summary);
    var details = el("div", "log-details");
    var ids = el("p", null, "record ");
    ids.appendChild(el("code", "log-key", item.id));
    details.appendChild(ids);
    if (item.trace_id) {
      var trace = el("p", null, "trace ");
      var link = el("a", "trace-link");
      link.setAttribute("href", traceBase + item.trace_id);
      link.appendChild(el("code", null, item.trace_id));
      trace.appendChild(link);
      if (item.span_id) trace.appendChild(document.createTextNode(" \u00b7 span " + item.span_id));
      details.appendChild(trace);
    }
    details.appendChild(el("pre", "log-json", JSON.stringify(item, null, 2)));
    node.appendChild(details);
    return node;
  }

  function setupTail(box) {
    var list = document.getElementById("log-list");
    var button = box.querySelector(".tail-toggle");
    var status = box.querySelector(".tail-status");
    var counter = document.querySelector(".tail-new");
    var empty = document.querySelector(".log-empty");
    var after = box.dataset.after;
    var running = false, busy = false, timer = null, added = 0;

    function url() {
      var src = box.dataset.src;
      return src + (src.indexOf("?") >= 0 ? "&" : "?") + "limit=" + TAIL_BATCH +
        "&after=" + encodeURIComponent(after);
    }
    function schedule(ms) {
      clearTimeout(timer);
      if (running) timer = setTimeout(poll, ms);
    }
    function poll() {
      if (!running || busy) return;
      busy = true;
      var full = false;
      fetch(url(), { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (r) {
          if (!r.ok) throw new Error("the read API answered " + r.status);
          return r.json();
        })
        .then(function (doc) {
          doc.items.forEach(function (item) {  // oldest first: each goes on top
            list.insertBefore(logNode(item, box.dataset.traces), list.firstChild);
          });
          if (doc.next_after) after = doc.next_after;
          added += doc.items.length;
          full = doc.items.length >= TAIL_BATCH;
          while (list.children.length > TAIL_MAX_ROWS) list.removeChild(list.lastChild);
          if (added) {
            counter.hidden = false;
            counter.textContent = "+" + added + " new since the page opened";
            if (empty) empty.hidden = true;
          }
          status.textContent = "following new records";
        })
        .catch(function (err) { status.textContent = "retrying: " + err.message; })
        .then(function () {
          busy = false;
          schedule(full ? 0 : TAIL_MS);
        });
    }
    button.addEventListener("click", function () {
      running = !running;
      button.setAttribute("aria-pressed", running ? "true" : "false");
      button.textContent = running ? "Pause" : "Live tail";
      box.setAttribute("data-state", running ? "running" : "paused");
      status.textContent = running ? "following new records" : (added ? "paused" : "");
      if (running) poll(); else clearTimeout(timer);
    });
  }

  var resizeTimer = null;
  window.addEventListener("resize", function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(function () {
      charts.forEach(function (c) {
        c.plot.setSize({ width: Math.max(c.node.clientWidth, 200), height: HEIGHT });
      });
    }, 150);
  });

  document.addEventListener("DOMContentLoaded", function () {
    // A range the server chose (remembered or fitting the data) goes into the URL, so
    // reloading or sharing the page shows the same view.
    var chosen = document.querySelector("[data-replace-url]");
    if (chosen && window.history.replaceState) {
      window.history.replaceState(null, "", chosen.getAttribute("data-replace-url"));
    }
    layoutWaterfall();
    document.querySelectorAll(".tail[data-src]").forEach(setupTail);
    var linked = document.querySelector(".log.linked");
    if (linked) linked.scrollIntoView({ block: "center" });
    document.querySelectorAll(".spark[data-spark]").forEach(drawSpark);
    document.querySelectorAll(".chart[data-kind]").forEach(drawChart);
    document.querySelectorAll("button.copy[data-copy]").forEach(setupCopy);
    setupPickAll(document.getElementById("pick-all"));
  });

  // The error list's "tick every group" box: ticks or clears the rows' boxes.
  function setupPickAll(box) {
    if (!box) return;
    box.addEventListener("change", function () {
      document.querySelectorAll('input[name="group"][form="bulk"]').forEach(function (b) {
        b.checked = box.checked;
      });
    });
  }

  // The setup page's Copy button: the text of the element it names, to the clipboard.
  function setupCopy(button) {
    button.addEventListener("click", function () {
      var node = document.getElementById(button.dataset.copy);
      if (!node || !navigator.clipboard) return;
      navigator.clipboard.writeText(node.textContent).then(function () {
        button.textContent = "Copied";
      }, function () { button.textContent = "Select and copy"; });
    });
  }
})();
