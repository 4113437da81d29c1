/* hlo-layout HTML report: draws the page from the JSON embedded beside this script.
   Plain ES2017, no library, no network. Every text from the data goes in through textContent. */
(function () {
  "use strict";
  var t0 = (window.performance && performance.now()) || 0;
  var script = document.currentScript;
  var root = script.parentNode;
  var app = root.querySelector(".hlo-app");
  var SVGNS = "http://www.w3.org/2000/svg";

  // ---- formatting (digit for digit as hlo-layout's Python prints) -------------------------
  // n * scale / div rounded half to even, as Python's format() rounds an exact binary value.
  function fixedRatio(num, div, decimals) {
    var scale = Math.pow(10, decimals);
    var neg = (num < 0) !== (div < 0);
    num = Math.abs(num) * scale; div = Math.abs(div);
    var q = Math.floor(num / div), r = num - q * div;
    if (2 * r > div || (2 * r === div && q % 2 === 1)) q += 1;
    var s = String(q);
    if (decimals > 0) {
      while (s.length <= decimals) s = "0" + s;
      s = s.slice(0, s.length - decimals) + "." + s.slice(s.length - decimals);
    }
    return (neg && q !== 0 ? "-" : "") + s;
  }
  // tsl::strings::HumanReadableNumBytes (hlo_layout.report.units.human_bytes).
  function humanBytes(n) {
    if (n === null || n === undefined) return "?";
    var sign = n < 0 ? "-" : "";
    n = Math.abs(n);
    if (n < 1024) return sign + n + "B";
    var unit = 0;
    while (n >= 1048576) { n = Math.floor(n / 1024); unit += 1; }
    return sign + fixedRatio(n, 1024, unit === 0 ? 1 : 2) + "KMGTPE".charAt(unit) + "iB";
  }
  function exactBytes(n) { return n === null || n === undefined ? "unknown" : group(n) + " B"; }
  function group(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
  function expansion(physical, logical) {
    if (physical === null || logical === null || physical === undefined || logical === undefined) return "?";
    if (!logical) return physical ? "∞" : "-";
    return fixedRatio(physical, logical, 1) + "x";
  }
  function percent(part, whole) { return whole ? fixedRatio(part * 100, whole, 1) + "%" : "-"; }
  function axisBytes(v) {
    if (v === 0) return "0";
    var units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"], u = 0;
    while (v >= 1024 && u < units.length - 1) { v /= 1024; u += 1; }
    return (Math.round(v * 10) / 10) + units[u];
  }

  // ---- DOM helpers --------------------------------------------------------------------------
  function h(tag, props, kids) {
    var e = document.createElement(tag);
    props = props || {};
    Object.keys(props).forEach(function (k) {
      var v = props[k];
      if (v === undefined || v === null) return;
      if (k === "text") e.textContent = String(v);
      else if (k === "class") e.className = v;
      else if (k === "data") Object.keys(v).forEach(function (d) { e.dataset[d] = String(v[d]); });
      else if (k.slice(0, 2) === "on") e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, String(v));
    });
    (kids || []).forEach(function (c) {
      if (c === null || c === undefined || c === false) return;
      e.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return e;
  }
  function s(tag, attrs, text) {
    var e = document.createElementNS(SVGNS, tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, String(attrs[k])); });
    if (text !== undefined) e.textContent = String(text);
    return e;
  }
  function bytesSpan(n, test, extra) {
    var d = { bytes: n === null || n === undefined ? "" : n };
    if (test) d.test = test;
    Object.keys(extra || {}).forEach(function (k) { d[k] = extra[k]; });
    return h("span", { text: humanBytes(n), title: exactBytes(n), data: d });
  }
  function section(title, sub) {
    var id = title.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");
    return h("section", { id: id }, [h("h2", { text: title }), sub ? h("p", { class: "sub", text: sub }) : null]);
  }
  function table(headers, rows, opts) {
    opts = opts || {};
    var thead = h("thead", {}, [h("tr", {}, headers.map(function (c) {
      return h("th", { class: c.num ? "num" : "", text: c.label, title: c.title });
    }))]);
    var tbody = h("tbody", {}, rows);
    var t = h("table", {}, [thead, tbody]);
    return opts.box === false ? t : h("div", { class: "tablebox" }, [t]);
  }
  function td(content, cls, title) {
    var e = h("td", { class: cls || "", title: title });
    if (content instanceof Node) e.appendChild(content); else e.textContent = content === null || content === undefined ? "" : String(content);
    return e;
  }
  function card(label, value, detail, valueClass, cls) {
    return h("div", { class: "card " + (cls || "") }, [
      h("div", { class: "label", text: label }),
      h("div", { class: "value " + (valueClass || "") }, [value]),
      detail ? h("div", { class: "detail" }, [detail]) : null,
    ]);
  }
  // Text that may wrap only at token boundaries, never inside a name, a number or a tile:
  // after `,` between dims (not inside `(...)` or `{...}`), after `:` and `/`, before `{`, and
  // between layout properties (`)T(`, `)S(`).
  function tokens(str, cls) {
    var e = h("span", { class: cls || "" });
    var text = String(str === null || str === undefined ? "" : str), from = 0, open = [];
    function cut(at) { e.appendChild(document.createTextNode(text.slice(from, at))); e.appendChild(document.createElement("wbr")); from = at; }
    for (var i = 0; i < text.length; i++) {
      var a = text.charAt(i), b = text.charAt(i + 1);
      if (a === "[" || a === "(" || a === "{") open.push(a);
      else if (a === "]" || a === ")" || a === "}") open.pop();
      if (i + 1 >= text.length) break;
      var top = open.length ? open[open.length - 1] : "";
      if ((a === "," && (top === "[" || top === "")) || a === ":" || a === "/" || b === "{" ||
          (a === ")" && top === "{" && /[A-Z(]/.test(b))) cut(i + 1);
    }
    e.appendChild(document.createTextNode(text.slice(from)));
    return e;
  }
  // Rows and headers that act on click also act on Enter / Space when focused.
  function keyboard(e) {
    e.tabIndex = 0;
    e.addEventListener("keydown", function (ev) {
      if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); e.click(); }
    });
  }
  function indexText(index) { return index && index.length ? "{" + index.join(",") + "}" : ""; }

  // ---- data ---------------------------------------------------------------------------------
  var data = JSON.parse(root.querySelector('script[type="application/json"]').textContent);
  var inspectModules = (data.inspect && data.inspect.modules) || [];
  var memoryModules = (data.memory && data.memory.modules) || [];

  function memoryFor(i, im) {
    for (var k = 0; k < memoryModules.length; k++) {
      var m = memoryModules[k];
      if (m.file === im.file && m.module === im.module) return m;
    }
    return memoryModules.length === inspectModules.length ? memoryModules[i] : null;
  }
  function spaceOf(mem, space) {
    var list = (mem && mem.spaces) || [];
    for (var i = 0; i < list.length; i++) if (list[i].memory_space === space) return list[i];
    return null;
  }
  function spaceName(mem, im, space) {
    var sp = spaceOf(mem, space);
    if (sp) return sp.name;
    var totals = (im && im.totals) || [];
    for (var j = 0; j < totals.length; j++) if (totals[j].memory_space === space) return totals[j].name;
    return "space";
  }
  // `S(1) fast (VMEM)`, as the terminal views name a space (the data's `label`).
  function spaceLabel(mem, im, space) {
    var sp = spaceOf(mem, space);
    if (sp && sp.label) return sp.label;
    var name = spaceName(mem, im, space), tag = "S(" + space + ")";
    return name === tag ? tag : tag + " " + name;
  }
  function backendLabel(mem) {
    if (!mem || !mem.backend) return "";
    return mem.backend.toUpperCase() + (mem.tpu_generation ? " " + mem.tpu_generation : "") + (mem.backend_assumed ? " (assumed)" : "");
  }
  // The URL fragment's options: `#module=2&sort=padding&space=1&filter=dot&only=SECTION-ID`.
  function hashOptions() {
    var out = {};
    (location.hash || "").replace(/^#/, "").split("&").forEach(function (kv) {
      var i = kv.indexOf("=");
      if (i > 0) { try { out[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1)); } catch (e) { /* a malformed option is ignored */ } }
    });
    return out;
  }

  // ---- memory over program order ------------------------------------------------------------
  function niceStep(raw) {
    var unit = 1;
    while (raw / unit >= 1024) unit *= 1024;
    var steps = [1, 2, 4, 5, 8, 10, 16, 20, 25, 32, 50, 64, 100, 128, 200, 250, 256, 500, 512, 1024];
    for (var i = 0; i < steps.length; i++) if (steps[i] * unit >= raw) return steps[i] * unit;
    return 1024 * unit;
  }

  // Bytes live at each step of one space, the space's peak (its share of the headline) as a
  // dashed level, and the step where the most is live marked.
  function drawChart(t, sp, label, compact) {
    var W = 960, H = compact ? 130 : 230, L = 70, R = 18, T = 26, B = 30, pw = W - L - R, ph = H - T - B;
    var live = t.live_bytes || [], bucket = t.bucket || 1;
    var length = t.length || live.length * bucket || 1;
    var most = Math.max.apply(null, live.concat([0]));
    var atStep = sp ? sp.live_bytes : most;
    var top = Math.max(1, atStep || 0, most, sp ? sp.peak_bytes || 0 : 0);
    var step = niceStep(top / (compact ? 2 : 4)), ymax = Math.ceil(top / step) * step;
    function x(stepIndex) { return L + (stepIndex / length) * pw; }
    function y(v) { return T + ph - (v / ymax) * ph; }
    var svg = s("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": label });
    var axis = s("g", { class: "axis" });
    for (var v = 0; v <= ymax + 0.5; v += step) {
      axis.appendChild(s("line", { class: "gridline", x1: L, x2: W - R, y1: y(v), y2: y(v) }));
      axis.appendChild(s("text", { x: L - 8, y: y(v) + 4, "text-anchor": "end" }, axisBytes(v)));
    }
    var xticks = 6;
    for (var k = 0; k <= xticks; k++) {
      var sx = Math.round((length * k) / xticks);
      axis.appendChild(s("line", { x1: x(sx), x2: x(sx), y1: T + ph, y2: T + ph + 4 }));
      axis.appendChild(s("text", { x: x(sx), y: H - 10, "text-anchor": "middle" }, group(sx)));
    }
    axis.appendChild(s("line", { x1: L, x2: W - R, y1: T + ph, y2: T + ph }));
    svg.appendChild(axis);
    var rangeRect = s("rect", { class: "range", x: 0, y: T, width: 0, height: ph, visibility: "hidden" });
    svg.appendChild(rangeRect);
    var d = "M" + x(0) + "," + y(0), line = "";
    live.forEach(function (val, i) {
      var x0 = x(i * bucket), x1 = x(Math.min(length, (i + 1) * bucket));
      d += "L" + x0 + "," + y(val) + "L" + x1 + "," + y(val);
      line += (i ? "L" : "M") + x0 + "," + y(val) + "L" + x1 + "," + y(val);
    });
    d += "L" + x(length) + "," + y(0) + "Z";
    svg.appendChild(s("path", { class: "area", d: d }));
    svg.appendChild(s("path", { class: "line", d: line }));
    if (sp && sp.peak_bytes) {
      svg.appendChild(s("line", { class: "peaklevel", x1: L, x2: W - R, y1: y(sp.peak_bytes), y2: y(sp.peak_bytes) }));
      svg.appendChild(s("text", { class: "levellabel", x: L + 6, y: y(sp.peak_bytes) + 14, "data-test": "chart-peak", "data-bytes": sp.peak_bytes },
        "peak " + humanBytes(sp.peak_bytes)));
    }
    if (sp && sp.peak_step !== null && sp.peak_step !== undefined) {
      var px = x(sp.peak_step + 0.5);
      svg.appendChild(s("line", { class: "stepline", x1: px, x2: px, y1: T - 8, y2: T + ph }));
      svg.appendChild(s("circle", { class: "stepdot", cx: px, cy: y(atStep), r: 3.5 }));
      var right = px > L + pw * 0.6;
      svg.appendChild(s("text", {
        class: "steplabel", x: px + (right ? -6 : 6), y: T - 10, "text-anchor": right ? "end" : "start", "data-test": "chart-live", "data-bytes": atStep,
      }, "live " + humanBytes(atStep) + " at step " + group(sp.peak_step) + (sp.peak_instruction ? " (" + sp.peak_instruction + ")" : "")));
    }
    var cursor = s("line", { class: "cursor", x1: 0, x2: 0, y1: T, y2: T + ph, visibility: "hidden" });
    svg.appendChild(cursor);
    var overlay = s("rect", { x: L, y: T, width: pw, height: ph, fill: "transparent" });
    svg.appendChild(overlay);
    var tip = h("div", { class: "tip" });
    var box = h("div", { class: "chart", data: { test: "chart", space: t.memory_space, most: most } }, [
      h("div", { class: "title", text: label }), svg, tip,
    ]);
    overlay.addEventListener("mousemove", function (ev) {
      var r = svg.getBoundingClientRect(), scale = r.width / W;
      var mx = (ev.clientX - r.left) / scale;
      var st = Math.max(0, Math.min(length - 1, Math.floor(((mx - L) / pw) * length)));
      var i = Math.floor(st / bucket), val = live[i] || 0;
      cursor.setAttribute("x1", x(st + 0.5)); cursor.setAttribute("x2", x(st + 0.5));
      cursor.setAttribute("visibility", "visible");
      tip.textContent = (bucket > 1 ? "steps " + group(i * bucket) + "–" + group(Math.min(length, (i + 1) * bucket) - 1) + " (max) · " : "step " + group(st) + " · ") + humanBytes(val) + " live";
      tip.style.display = "block";
      var bx = box.getBoundingClientRect();
      tip.style.left = Math.min(ev.clientX - bx.left + 12, bx.width - tip.offsetWidth - 4) + "px";
      tip.style.top = (ev.clientY - bx.top - 30) + "px";
    });
    overlay.addEventListener("mouseleave", function () { cursor.setAttribute("visibility", "hidden"); tip.style.display = "none"; });
    return {
      element: box,
      space: t.memory_space,
      showRange: function (start, end) {
        if (start === null || start === undefined || end === null || end === undefined) { rangeRect.setAttribute("visibility", "hidden"); return; }
        rangeRect.setAttribute("x", x(start)); rangeRect.setAttribute("width", Math.max(1.5, x(end + 1) - x(start)));
        rangeRect.setAttribute("visibility", "visible");
      },
    };
  }

  // ---- roofline (log-log: flop/byte against attainable FLOP/s, the chip's roofs) ------------
  var costModules = (data.cost && data.cost.modules) || [];
  function costFor(i, im) {
    for (var k = 0; k < costModules.length; k++) {
      var c = costModules[k];
      if (c && c.file === im.file && c.module === im.module) return c;
    }
    return costModules.length === inspectModules.length ? costModules[i] : null;
  }
  function si(v, unit) {
    var prefixes = [[1e18, "E"], [1e15, "P"], [1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
    for (var i = 0; i < prefixes.length; i++) {
      if (Math.abs(v) >= prefixes[i][0]) return Number((v / prefixes[i][0]).toPrecision(3)) + " " + prefixes[i][1] + unit;
    }
    return Number(v.toPrecision(3)) + " " + unit;
  }
  function seconds(v) {
    var units = [[1, "s"], [1e-3, "ms"], [1e-6, "µs"], [1e-9, "ns"]];
    for (var i = 0; i < units.length; i++) if (Math.abs(v) >= units[i][0]) return Number((v / units[i][0]).toPrecision(3)) + " " + units[i][1];
    return v ? Number((v / 1e-12).toPrecision(3)) + " ps" : "0 s";
  }
  function drawRoofline(c) {
    var W = 960, H = 420, L = 78, R = 160, T = 20, B = 44, pw = W - L - R, ph = H - T - B;
    var pts = c.points || [];
    var peaks = c.peaks || {}, classes = Object.keys(peaks);
    var used = {};
    pts.forEach(function (p) { used[p.type] = true; });
    var maxPeak = Math.max.apply(null, classes.map(function (k) { return peaks[k]; }).concat([1]));
    var xs = pts.map(function (p) { return p.intensity; });
    var ys = pts.map(function (p) { return p.flops / p.seconds; });
    var ridge = maxPeak / c.bandwidth;
    var x0 = Math.pow(10, Math.floor(Math.log10(Math.min.apply(null, xs.concat([ridge])) / 2)));
    var x1 = Math.pow(10, Math.ceil(Math.log10(Math.max.apply(null, xs.concat([ridge])) * 2)));
    var y0 = Math.pow(10, Math.floor(Math.log10(Math.min.apply(null, ys.concat([maxPeak])) / 2)));
    var y1 = Math.pow(10, Math.ceil(Math.log10(maxPeak * 2)));
    function x(v) { return L + (Math.log10(v) - Math.log10(x0)) / (Math.log10(x1) - Math.log10(x0)) * pw; }
    function y(v) { return T + ph - (Math.log10(v) - Math.log10(y0)) / (Math.log10(y1) - Math.log10(y0)) * ph; }
    var svg = s("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": "roofline of " + c.chip });
    var axis = s("g", { class: "axis" });
    for (var e = Math.log10(x0); e <= Math.log10(x1) + 1e-9; e++) {
      var v = Math.pow(10, e);
      axis.appendChild(s("line", { class: "gridline", x1: x(v), x2: x(v), y1: T, y2: T + ph }));
      axis.appendChild(s("text", { x: x(v), y: T + ph + 16, "text-anchor": "middle" }, Number(v.toPrecision(1))));
    }
    for (var f = Math.log10(y0); f <= Math.log10(y1) + 1e-9; f++) {
      var w = Math.pow(10, f);
      axis.appendChild(s("line", { class: "gridline", x1: L, x2: L + pw, y1: y(w), y2: y(w) }));
      axis.appendChild(s("text", { x: L - 8, y: y(w) + 4, "text-anchor": "end" }, si(w, "FLOP/s")));
    }
    axis.appendChild(s("text", { x: L + pw / 2, y: H - 6, "text-anchor": "middle" }, "arithmetic intensity (flop per byte moved)"));
    svg.appendChild(axis);
    // One roof per distinct peak, labelled with every element-type class it serves.
    var byPeak = {};
    classes.forEach(function (k) { (byPeak[peaks[k]] = byPeak[peaks[k]] || []).push(k); });
    Object.keys(byPeak).forEach(function (key) {
      var names = byPeak[key], peak = peaks[names[0]], knee = peak / c.bandwidth;
      var inUse = names.some(function (k) { return used[k]; });
      var d = "M" + x(x0) + "," + y(Math.max(y0, x0 * c.bandwidth)) + "L" + x(Math.min(x1, knee)) + "," + y(Math.min(peak, Math.min(x1, knee) * c.bandwidth));
      if (knee < x1) d += "L" + x(x1) + "," + y(peak);
      svg.appendChild(s("path", { class: "roof" + (inUse ? "" : " unused"), d: d, "data-test": "roof", "data-type": names.join(","), "data-peak": peak }));
      svg.appendChild(s("text", { class: "rooflabel" + (inUse ? "" : " unused"), x: x(x1) + 6, y: y(peak) + 4 }, names.join(", ") + " " + si(peak, "FLOP/s")));
    });
    var tip = h("div", { class: "tip" });
    var box = h("div", { class: "chart", data: { test: "roofline", chip: c.chip } }, [
      h("div", { class: "title", text: c.chip + " · " + si(c.bandwidth, "B/s") + " · " + pts.length + " of " + group(c.points_total) + " instructions with flops" }), svg, tip,
    ]);
    var total = c.bound_seconds || 1;
    pts.forEach(function (p, i) {
      var r = Math.max(2.5, Math.min(14, Math.sqrt(p.seconds / total) * 40));
      var dot = s("circle", { class: "point " + p.bound, cx: x(p.intensity), cy: y(ys[i]), r: r, "data-test": "roofline-point", "data-name": p.name, "data-flops": p.flops, "data-bytes": p.bytes, "data-seconds": p.seconds });
      dot.addEventListener("mousemove", function (ev) {
        tip.textContent = p.name + (p.executions > 1 ? " ×" + group(p.executions) : "") + " (" + p.opcode + ") · " + si(p.flops, "FLOP") + " · " + humanBytes(p.bytes) + " · " + Number(p.intensity.toPrecision(3)) + " flop/B · " + seconds(p.seconds) + " " + p.bound + "-bound";
        tip.style.display = "block";
        var bx = box.getBoundingClientRect();
        tip.style.left = Math.min(ev.clientX - bx.left + 12, bx.width - tip.offsetWidth - 4) + "px";
        tip.style.top = (ev.clientY - bx.top - 30) + "px";
      });
      dot.addEventListener("mouseleave", function () { tip.style.display = "none"; });
      svg.appendChild(dot);
    });
    return box;
  }
  function rooflineSection(c) {
    if (!c) return null;
    var sec = section("Roofline", "Each instruction with flops (fusions, dots, convolutions) at its arithmetic intensity and the FLOP/s the chip's roofs allow it, sized by its share of the module's " + seconds(c.bound_seconds || 0) + " bound time (over all its executions; loop bodies count their trip count). From XLA's cost analysis of the dump; bytes at the layouts' physical size.");
    if (!c.chip) { sec.appendChild(h("p", { class: "empty", data: { test: "roofline-none" }, text: "No roofline: " + (c.chip_reason || "no chip known") + "." })); return sec; }
    if (!(c.points || []).length) { sec.appendChild(h("p", { class: "empty", text: "No instruction with flops to draw." })); return sec; }
    sec.appendChild(drawRoofline(c));
    return sec;
  }

  // ---- a card per buffer --------------------------------------------------------------------
  function bufferCard(b, mem, im, test) {
    if (!b) return h("div", { class: "buffer-card empty", text: "Pick a buffer to see its card." });
    var rows = [];
    function row(k, v, long, title) {
      if (v === null || v === undefined || v === "") return;
      rows.push(h("dt", { text: k, title: title, class: long ? "long" : "" }), h("dd", { class: long ? "long" : "" }, [v]));
    }
    var physical = b.bytes !== undefined ? b.bytes : b.physical_bytes;
    var padding = b.padding_bytes !== undefined ? b.padding_bytes : (physical !== null && b.logical_bytes !== null ? physical - b.logical_bytes : null);
    row("shape", tokens(b.shape, "mono"), true);
    row("logical", h("span", { text: exactBytes(b.logical_bytes) + " (" + humanBytes(b.logical_bytes) + ")", data: { test: "card-logical", bytes: b.logical_bytes } }));
    row("physical", h("span", { text: exactBytes(physical) + " (" + humanBytes(physical) + ")", data: { test: "card-physical", bytes: physical } }));
    row("padding", h("span", { text: exactBytes(padding) + (physical ? " (" + percent(padding, physical) + " of the buffer)" : ""), data: { test: "card-padding", bytes: padding } }));
    row("expansion", expansion(physical, b.logical_bytes));
    row("allocation", b.allocation);
    if (b.memory_space !== null && b.memory_space !== undefined) row("memory space", spaceLabel(mem, im, b.memory_space));
    if (b.start !== undefined && b.start !== null) {
      var len = b.end - b.start + 1;
      row("live range", "steps " + group(b.start) + " – " + group(b.end) + " (" + group(len) + " step" + (len === 1 ? "" : "s") + ")");
    }
    if (b.opcode) row("defined by", b.opcode + (b.computation ? " in " + b.computation : ""));
    if (b.op_name !== undefined || b.source !== undefined) {
      row("op_name", h("span", { data: { test: "card-op-name" } }, [b.op_name ? tokens(b.op_name, "mono") : h("span", { class: "muted", text: "(no op_name)" })]), true);
      row("source", h("span", { data: { test: "card-source" } }, [b.source ? tokens(b.source, "mono") : h("span", { class: "muted", text: sourceKey(b, mem) })]), true);
    }
    if (b.via) {
      row("metadata of", h("span", { data: { test: "card-via" } }, [h("code", { text: b.via }),
        h("span", { class: "muted", text: " — " + b.name + " has no metadata of its own: its op_name and source are those of this instruction (the one inside it that writes the value, or the producer it copies)" })]), true,
        "Where the attribution comes from (hlo-layout memory, NOTE: [attribution])");
    }
    return h("div", { class: "buffer-card", data: { test: test || "buffer-card", name: b.name } }, [
      h("h3", { text: b.name + indexText(b.index) }), h("dl", {}, rows),
    ]);
  }

  // ---- buffers live at the peak step --------------------------------------------------------
  // A cell of one line: the text cut with an ellipsis where it does not fit (`tail`: cut at its
  // start, so that the end of an op_name or a path stays), the whole text in its tooltip.
  function cutCell(text, cls, title) {
    text = text === null || text === undefined ? "" : String(text);
    var e = h("td", { class: "cut " + (cls || ""), title: title || text });
    if (/\btail\b/.test(cls || "")) e.appendChild(h("span", { text: text })); else e.textContent = text;
    return e;
  }
  // The lists at the peak step of one space: the module's own (`live_at_peak_space`) or one of
  // `space_peaks`.
  function peakSpaces(mem) {
    var own = mem.live_at_peak_space;
    if (own === undefined || own === null) own = (mem.live_at_peak || []).length ? mem.live_at_peak[0].memory_space : null;
    var out = [];
    if (own !== null && own !== undefined) out.push({ memory_space: own, lists: mem });
    (mem.space_peaks || []).forEach(function (p) { out.push({ memory_space: p.memory_space, lists: p }); });
    return out.sort(function (a, b) { return a.memory_space - b.memory_space; });
  }
  // A buffer's source-line group: its line, else the program's arguments' group (named by the
  // data: `arguments_group`), else none.
  function sourceKey(b, mem) { return b.source || (b.argument && mem.arguments_group) || "(no source line)"; }
  function opKey(b) { return b.op_name || "(no op_name)"; }

  function liveAtPeak(mem, im, charts, container) {
    var sec = section("Buffers live at the peak step", "");
    container.appendChild(sec);
    var groupsBox = h("div", { class: "cols groups" });
    container.appendChild(groupsBox);
    var spaces = peakSpaces(mem);
    if (!spaces.length) { sec.appendChild(h("p", { class: "empty", text: "No buffer is live at the peak step." })); return; }
    var hash = hashOptions();
    var state = { sort: hash.sort === "padding" ? "padding" : "size", space: spaces[0].memory_space, filter: hash.filter || "", selected: null };
    spaces.forEach(function (p) { if (p.memory_space === mem.live_at_peak_space) state.space = p.memory_space; });
    spaces.forEach(function (p) { if (hash.space !== undefined && String(p.memory_space) === hash.space) state.space = p.memory_space; });
    var sub = h("p", { class: "sub", data: { test: "live-summary" } });
    sec.appendChild(sub);
    var cardBox = h("div", { class: "cardbox" });
    var body = h("tbody");
    var count = h("span", { class: "count" });
    var picker = h("select", { "aria-label": "memory space", data: { test: "space-filter" } }, spaces.map(function (p) {
      var sp = spaceOf(mem, p.memory_space);
      return h("option", { value: p.memory_space, text: spaceLabel(mem, im, p.memory_space) + (sp ? " · step " + group(sp.peak_step) : "") });
    }));
    picker.value = String(state.space);
    picker.addEventListener("change", function () { state.space = Number(picker.value); state.selected = null; draw(); });
    var search = h("input", { type: "search", placeholder: "filter: buffer, shape, op_name, source", "aria-label": "filter buffers", data: { test: "live-filter" } });
    search.value = state.filter;
    search.addEventListener("input", function () { state.filter = search.value; state.selected = null; drawRows(); });
    var sortButtons = {};
    function sortButton(key, label) {
      var b = h("button", { type: "button", text: label, data: { test: "sort-" + key }, onclick: function () { state.sort = key; drawRows(); } });
      sortButtons[key] = b;
      return b;
    }
    // The stylesheet sizes the columns (`col-KEY`): every row stays one line high.
    var heads = [
      ["name", "buffer"], ["shape", "shape"], ["size", "size"], ["padding", "padding"],
      ["kind", "kind"], ["live", "live range"], ["op", "op_name"], ["source", "source"],
    ];
    var ths = {};
    var colgroup = h("colgroup", {}, heads.map(function (c) { return h("col", { class: "col-" + c[0] }); }));
    var thead = h("thead", {}, [h("tr", {}, heads.map(function (c) {
      var sortable = c[0] === "size" || c[0] === "padding";
      var th = h("th", { class: "cut col-" + c[0] + (sortable ? " num sortable" : c[0] === "live" ? " num" : ""), text: c[1] });
      if (sortable) { th.addEventListener("click", function () { state.sort = c[0]; drawRows(); }); keyboard(th); }
      ths[c[0]] = th;
      return th;
    }))]);
    function lists() {
      for (var i = 0; i < spaces.length; i++) if (spaces[i].memory_space === state.space) return spaces[i].lists;
      return spaces[0].lists;
    }
    function select(b, tr) {
      state.selected = b;
      Array.prototype.forEach.call(body.querySelectorAll("tr.selected"), function (r) { r.classList.remove("selected"); });
      if (tr) tr.classList.add("selected");
      cardBox.textContent = "";
      cardBox.appendChild(bufferCard(b, mem, im));
      charts.forEach(function (c) { c.showRange(b && c.space === b.memory_space ? b.start : null, b && c.space === b.memory_space ? b.end : null); });
    }
    function matches(b, words) {
      if (!words.length) return true;
      var text = [b.name + indexText(b.index), b.shape, opKey(b), sourceKey(b, mem), b.via || "", b.allocation].join("\n").toLowerCase();
      return words.every(function (w) { return text.indexOf(w) >= 0; });
    }
    function drawRows() {
      var l = lists(), all = l.live_at_peak || [];
      var words = state.filter.toLowerCase().split(/\s+/).filter(function (w) { return w; });
      var rows = all.filter(function (b) { return matches(b, words); });
      var key = state.sort === "padding" ? "padding_bytes" : "bytes";
      rows = rows.slice().sort(function (a, b) { return (b[key] || 0) - (a[key] || 0) || (b.bytes || 0) - (a.bytes || 0) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0); });
      Object.keys(sortButtons).forEach(function (k) { sortButtons[k].classList.toggle("on", k === state.sort); });
      ths.size.classList.toggle("sorted", state.sort === "size");
      ths.padding.classList.toggle("sorted", state.sort === "padding");
      var maxBytes = Math.max.apply(null, all.map(function (b) { return b.bytes || 0; }).concat([1]));
      body.textContent = "";
      var first = null;
      rows.forEach(function (b) {
        var tr = h("tr", { class: "pick", data: { test: "live-row", name: b.name, index: (b.index || []).join(","), bytes: b.bytes, padding: b.padding_bytes, space: b.memory_space } });
        var bar = h("span", { class: "bar" });
        bar.style.width = Math.max(1, Math.round((b.bytes / maxBytes) * 28)) + "px";
        var size = h("td", { class: "num cut" }, [bar, bytesSpan(b.bytes)]);
        var via = b.via ? " (metadata of " + b.via + ")" : "";
        tr.appendChild(cutCell(b.name + indexText(b.index), "name"));
        tr.appendChild(cutCell(b.shape, "shape"));
        tr.appendChild(size);
        var pad = h("td", { class: "num cut" }, [bytesSpan(b.padding_bytes)]);
        tr.appendChild(pad);
        tr.appendChild(cutCell(b.allocation, "col-kind"));
        tr.appendChild(cutCell(b.start !== undefined && b.start !== null ? group(b.start) + "–" + group(b.end) : "", "num"));
        var op = cutCell(b.op_name || "(no op_name)", "mono tail op" + (b.op_name ? "" : " muted"), opKey(b) + via);
        op.dataset.test = "live-op";
        tr.appendChild(op);
        var src = cutCell(sourceKey(b, mem), "mono tail source" + (b.source ? "" : " muted"), sourceKey(b, mem) + via);
        src.dataset.test = "live-source";
        tr.appendChild(src);
        tr.addEventListener("click", function () { select(b, tr); });
        keyboard(tr);
        if (state.selected === b) tr.classList.add("selected");
        if (!first) first = [b, tr];
        body.appendChild(tr);
      });
      var total = l.live_at_peak_total || all.length;
      count.textContent = rows.length + " shown" + (rows.length < all.length ? " of " + all.length : "") + (total > all.length ? " (the largest " + all.length + " of " + group(total) + " embedded)" : "");
      if (!state.selected || rows.indexOf(state.selected) < 0) select(first ? first[0] : null, first ? first[1] : null);
    }
    function draw() {
      var l = lists(), sp = spaceOf(mem, state.space);
      var total = l.live_at_peak_total || (l.live_at_peak || []).length;
      sub.textContent = "";
      sub.dataset.space = state.space;
      if (sp) {
        sub.dataset.bytes = sp.live_bytes;
        sub.appendChild(document.createTextNode(spaceLabel(mem, im, state.space) + " at step " + group(sp.peak_step) + (sp.peak_instruction ? " (" + sp.peak_instruction + ")" : "") + ": "));
        sub.appendChild(bytesSpan(sp.live_bytes));
        sub.appendChild(document.createTextNode(" live in " + group(total) + " buffer" + (total === 1 ? "" : "s") + " (the space's peak is " + humanBytes(sp.peak_bytes) + "). "));
      }
      sub.appendChild(document.createTextNode("Click a row for its card; its live range is shaded on the chart above."));
      drawRows();
      drawGroups(l, sp);
    }
    function pickGroup(text) {
      search.value = state.filter = text;
      state.selected = null;
      drawRows();
      sec.scrollIntoView({ block: "start" });
    }
    function drawGroups(l, sp) {
      groupsBox.textContent = "";
      var where = sp ? " at the peak step of " + spaceLabel(mem, im, sp.memory_space) : "";
      var bySource = section("Peak by source line", "The buffers live" + where + ", summed by the line of the program that made them (source_file:source_line). Click a row to filter the table.");
      bySource.dataset.test = "by-source";
      bySource.appendChild(groupBars(l.by_source || [], "source", "(no source line)", l.by_source_total, pickGroup, mem.arguments_group));
      var byOp = section("Peak by op_name", "The same buffers, summed by the operation that made them (metadata op_name). Click a row to filter the table.");
      byOp.dataset.test = "by-op-name";
      byOp.appendChild(groupBars(l.by_op_name || [], "op_name", "(no op_name)", l.by_op_name_total, pickGroup));
      groupsBox.appendChild(bySource);
      groupsBox.appendChild(byOp);
    }
    var which = spaces.length > 1 ? picker : h("span", { text: spaceLabel(mem, im, state.space) });
    var controls = h("div", { class: "controls" }, [h("span", { text: "Peak step of" }), which, h("span", { text: "·" }), h("span", { text: "Sort by" }),
      sortButton("size", "size"), sortButton("padding", "padding"), h("span", { text: "·" }), search, count]);
    var tbl = h("div", { class: "tablebox" }, [h("table", { class: "fixed live", data: { test: "live-table" } }, [colgroup, thead, body])]);
    sec.appendChild(controls);
    sec.appendChild(cardBox);
    sec.appendChild(tbl);
    draw();
  }
  function groupBars(rows, key, none, total, onPick, other) {
    if (!rows.length) return h("p", { class: "empty", text: "No buffer." });
    var list = barList(rows, function (r) { return r[key] === null || r[key] === undefined ? none : r[key]; }, function (r) { return r.bytes; },
      function (r) { return h("span", {}, [bytesSpan(r.bytes), " · " + r.values + " buffer" + (r.values === 1 ? "" : "s")]); },
      { test: "group-" + key, key: key, onPick: onPick, muted: [none, other] });
    if (total && total > rows.length) return h("div", {}, [list, h("p", { class: "muted", text: "The largest " + rows.length + " of " + group(total) + " groups are embedded." })]);
    return list;
  }

  // ---- bars: a label and a value per row ----------------------------------------------------
  var BAR_ROWS = 15;
  function barList(rows, labelOf, valueOf, formatter, opts) {
    opts = opts || {};
    var max = Math.max.apply(null, rows.map(valueOf).concat([1]));
    var trs = rows.map(function (r, i) {
      var bar = h("span", { class: "bar " + (opts.cls || "") });
      bar.style.width = Math.max(1, Math.round((valueOf(r) / max) * 80)) + "px";
      var label = labelOf(r);
      var lc = cutCell(label, "mono tail" + ((opts.muted || []).indexOf(label) >= 0 ? " muted" : ""));
      var tr = h("tr", { data: opts.test ? { test: opts.test, key: r[opts.key] === null || r[opts.key] === undefined ? "" : r[opts.key], bytes: valueOf(r) } : null }, [lc, h("td", { class: "num cut" }, [bar, formatter(r)])]);
      if (opts.onPick) {
        tr.className = "pick";
        keyboard(tr);
        tr.addEventListener("click", function () { opts.onPick(label); });
      }
      if (i >= BAR_ROWS) tr.hidden = true;
      return tr;
    });
    var t = h("table", { class: "bars fixed" }, [h("colgroup", {}, [h("col"), h("col", { class: "col-value" })]), h("tbody", {}, trs)]);
    if (rows.length <= BAR_ROWS) return t;
    var more = h("button", { type: "button", text: "show all " + rows.length, onclick: function () {
      trs.forEach(function (tr) { tr.hidden = false; }); more.remove();
    } });
    return h("div", {}, [t, more]);
  }


  // ---- padding by tiling pattern ------------------------------------------------------------
  var TILE_COLORS = ["#aecbfa", "#fdd663", "#a8dab5", "#f6aea9", "#d7aefb", "#fcc934"];
  function drawGrid(p) {
    var cols = p.columns, rows = p.rows;
    // Small arrays get square cells numbered with their offset (the tiled-layout document's
    // figures); big ones get cells at least 2 px wide and rows tall enough to see the tiles.
    var small = cols <= 16 && rows <= 16;
    var cw = small ? 28 : Math.max(2, Math.min(14, Math.floor(1000 / cols)));
    var ch = small ? 28 : Math.max(cw, Math.min(24, Math.floor(200 / rows)));
    var W = cols * cw, H = rows * ch;
    var svg = s("svg", { width: W + 2, height: H + 2, viewBox: "-1 -1 " + (W + 2) + " " + (H + 2), role: "img", "aria-label": "memory order of " + p.shape });
    var boxes = {};
    for (var r = 0; r < rows; r++) {
      for (var c = 0; c < cols; c++) {
        var i = r * cols + c, pad = r >= p.logical_rows || c >= p.logical_columns, tile = p.tiles[i];
        var bb = boxes[tile] || (boxes[tile] = [c, r, c, r]);
        bb[0] = Math.min(bb[0], c); bb[1] = Math.min(bb[1], r); bb[2] = Math.max(bb[2], c); bb[3] = Math.max(bb[3], r);
        svg.appendChild(s("rect", {
          x: c * cw, y: r * ch, width: cw, height: ch,
          fill: pad ? "#e8eaed" : TILE_COLORS[tile % TILE_COLORS.length],
          stroke: cw >= 8 ? "#ffffff" : "none", "stroke-width": cw >= 8 ? 1 : 0,
        }));
        if (small) {
          svg.appendChild(s("text", { x: c * cw + cw / 2, y: r * ch + ch / 2 + 4, "text-anchor": "middle", "font-size": 10, fill: pad ? "#9aa0a6" : "#202124" }, (pad ? "·" : "") + p.offsets[i]));
        }
      }
    }
    Object.keys(boxes).forEach(function (k) {
      var bb = boxes[k];
      svg.appendChild(s("rect", { x: bb[0] * cw, y: bb[1] * ch, width: (bb[2] - bb[0] + 1) * cw, height: (bb[3] - bb[1] + 1) * ch, fill: "none", stroke: "#5f6368", "stroke-width": 1 }));
    });
    var tip = h("div", { class: "tip" });
    var box = h("div", { class: "grid", data: { test: "tile-grid" } }, [svg, tip]);
    svg.addEventListener("mousemove", function (ev) {
      var b = svg.getBoundingClientRect();
      var c = Math.floor((ev.clientX - b.left - 1) / cw), r = Math.floor((ev.clientY - b.top - 1) / ch);
      if (c < 0 || r < 0 || c >= cols || r >= rows) { tip.style.display = "none"; return; }
      var i = r * cols + c, pad = r >= p.logical_rows || c >= p.logical_columns;
      tip.textContent = "[" + r + "," + c + "] offset " + group(p.offsets[i]) + " · tile " + p.tiles[i] + (pad ? " · padding" : "");
      tip.style.display = "block";
      var bx = box.getBoundingClientRect();
      tip.style.left = (ev.clientX - bx.left + 12) + "px"; tip.style.top = (ev.clientY - bx.top - 28) + "px";
    });
    svg.addEventListener("mouseleave", function () { tip.style.display = "none"; });
    return box;
  }

  function paddingSection(im) {
    var groups = im.padding_groups;
    if (!groups) return null;
    var sec = section("Padding by tiling pattern",
      "Values whose buffer is bigger than their data, grouped by the layout properties that pad them (each value counted once, no liveness). The picture draws memory order as hlo-layout layout --grid does.");
    if (!groups.length) { sec.appendChild(h("p", { class: "empty", text: "No value is padded." })); return sec; }
    groups.forEach(function (g) {
      var box = h("div", { class: "pattern", data: { test: "padding-group", pattern: g.pattern, bytes: g.padding_bytes } });
      box.appendChild(h("h3", {}, [h("code", { text: g.pattern }), " · " + group(g.values) + " value" + (g.values === 1 ? "" : "s") + " · ", bytesSpan(g.padding_bytes), " padding of ", bytesSpan(g.physical_bytes), " (" + percent(g.padding_bytes, g.physical_bytes) + ")"]));
      box.appendChild(table(
        [{ label: "shape" }, { label: "values", num: true }, { label: "data each", num: true }, { label: "buffer each", num: true }, { label: "padding (all)", num: true }, { label: "expansion", num: true }, { label: "why" }],
        g.rows.map(function (r) {
          return h("tr", {}, [td(tokens(r.shape), "shape", "e.g. " + r.example), td(group(r.values), "num"), td(bytesSpan(r.logical_bytes), "num"), td(bytesSpan(r.physical_bytes), "num"), td(bytesSpan(r.padding_bytes), "num"), td(expansion(r.physical_bytes, r.logical_bytes), "num"), td((r.reasons || []).join("; "))]);
        }), { box: false }));
      if (g.rows_total) box.appendChild(h("p", { class: "muted", text: "… and " + (g.rows_total - g.rows.length) + " more shapes" }));
      var p = g.picture;
      if (p) {
        box.appendChild(drawGrid(p));
        var legend = h("div", { class: "legend" }, [
          p.shape === p.of ? "Memory order of " : "Memory order of the stand-in ",
          h("code", { text: p.shape }),
          p.shape === p.of ? "" : " (its two most-minor dimensions cut to a whole tile plus the remainder the tile pads)",
          ": " + p.logical_rows + "×" + p.logical_columns + " elements shown as " + p.rows + "×" + p.columns + ". Each outlined block is a first-level tile (colours tell tiles apart)",
          h("span", { class: "swatch", title: "padding" }), "grey is padding; hover a cell for its offset in elements.",
        ]);
        legend.querySelector(".swatch").style.background = "#e8eaed";
        box.appendChild(legend);
      }
      sec.appendChild(box);
    });
    return sec;
  }

  // ---- the compiler's buffer assignment -----------------------------------------------------
  function compilerSection(mem, im) {
    var ba = im.buffer_assignment, comp = mem && mem.compiler;
    if (!ba && !comp) return null;
    var sec = section("The compiler's buffer assignment",
      "What XLA allocated (its *buffer-assignment.txt beside the dump), shown beside our figures; it is never used to compute ours.");
    if (comp && mem.spaces) {
      sec.appendChild(h("h3", { text: "Temp allocation per memory space" }));
      var ct = comp.temp_allocation_bytes || {};
      sec.appendChild(table([{ label: "memory space" }, { label: "ours", num: true }, { label: "compiler", num: true }, { label: "" }],
        mem.spaces.map(function (sp) {
          var theirs = ct[String(sp.memory_space)];
          var same = theirs === sp.temp_allocation_bytes;
          return h("tr", { data: { test: "compiler-row", space: sp.memory_space } }, [td(spaceLabel(mem, im, sp.memory_space)), td(bytesSpan(sp.temp_allocation_bytes), "num"),
            td(theirs === undefined ? "-" : bytesSpan(theirs), "num"),
            td(theirs === undefined ? "" : h("span", { class: same ? "ok" : "diff", text: same ? "equal" : "differs by " + humanBytes(sp.temp_allocation_bytes - theirs) }))]);
        }), { box: false }));
    }
    if (ba) {
      sec.appendChild(h("p", { class: "muted" }, ["From ", h("code", { text: ba.file }), ": " + group(ba.values_matching) + " of " + group(ba.values_checked) + " value sizes equal ours; total ", bytesSpan(ba.total_bytes), "."]));
      var cols = h("div", { class: "cols" });
      cols.appendChild(h("div", {}, [h("h3", { text: "Bytes by color (memory space)" }), table([{ label: "color" }, { label: "allocations", num: true }, { label: "bytes", num: true }],
        (ba.colors || []).map(function (c) { return h("tr", {}, [td(String(c.color)), td(group(c.allocations), "num"), td(bytesSpan(c.bytes), "num")]); }), { box: false })]));
      var allocs = ba.allocations || [];
      cols.appendChild(h("div", {}, [h("h3", { text: "Largest allocations" + (ba.allocations_total ? " (" + allocs.length + " of " + group(ba.allocations_total) + ")" : "") }),
        table([{ label: "#" }, { label: "size", num: true }, { label: "color" }, { label: "kind" }, { label: "values" }],
          allocs.map(function (a) {
            var names = (a.values || []).map(function (v) { return v.name + indexText(v.index); }).join(", ");
            if (a.values_total) names += " … +" + (a.values_total - a.values.length);
            return h("tr", {}, [td(String(a.index)), td(bytesSpan(a.size), "num"), td(String(a.color)), td(a.kind), td(names, "name")]);
          }))]));
      sec.appendChild(cols);
    }
    return sec;
  }


  // ---- the headline: the module's peak, its parts, each space's figures, the legend ---------
  function headline(mem, im) {
    var box = h("div", { class: "headline", data: { test: "headline" } });
    var cards = h("div", { class: "cards" });
    box.appendChild(cards);
    if (mem) {
      var parts = [];
      (mem.peak_parts || []).forEach(function (p, k) {
        parts.push(k ? " + " : "= ");
        parts.push(h("span", { class: "part", data: { test: "peak-part", name: p.name, bytes: p.bytes } }, [p.name + " ", bytesSpan(p.bytes)]));
      });
      if (!mem.scheduled) parts.push(h("span", { class: "estimate", text: " (estimate: the dump is not scheduled)" }));
      cards.appendChild(card("Peak memory", bytesSpan(mem.peak_bytes, "peak-total"), h("span", {}, parts), "peak", "wide"));
    } else {
      cards.appendChild(card("Peak memory", h("span", { text: "unavailable", data: { test: "peak-unavailable" } }), "see the notes"));
    }
    var totals = im.totals || [];
    var padding = 0, physical = 0;
    totals.forEach(function (t) { padding += t.padding_bytes || 0; physical += t.physical_bytes || 0; });
    if (totals.length) cards.appendChild(card("Padding", bytesSpan(padding, "padding-total"), percent(padding, physical) + " of the " + humanBytes(physical) + " every value defines (counted once)"));
    if (im.instructions !== undefined) {
      var fusions = 0;
      (im.fusions_by_kind || []).forEach(function (f) { fusions += f[1]; });
      cards.appendChild(card("Instructions", h("span", { text: group(im.instructions) }), group(fusions) + " fusions · " + group(im.computations_total || 0) + " computations"));
    }
    if (!mem || !(mem.spaces || []).length) return box;
    var spaces = mem.spaces;
    var fragmented = spaces.some(function (sp) { return sp.fragmentation_bytes; });
    // Thread-local allocations are part of the peak on CPU and GPU (jax's TPU figure leaves them out).
    var local = mem.backend !== "tpu" && spaces.some(function (sp) { return sp.thread_local_bytes; });
    var cols = [
      { label: "memory space" },
      { label: "peak", num: true, key: "peak_bytes", test: "space-peak", title: "the space's share of the peak" },
      { label: "static", num: true, key: "static_bytes", test: "space-static", title: "parameters, constants and live-out buffers" },
      { label: "temp allocation", num: true, key: "temp_allocation_bytes", test: "space-temp", title: "the heap of temporaries the compiler reserves" },
      { label: "heap peak", num: true, key: "heap_peak_bytes", test: "space-heap", title: "the most temporaries live at once" },
    ];
    if (fragmented) cols.push({ label: "fragmentation", num: true, key: "fragmentation_bytes", test: "space-fragmentation", title: "temp allocation - heap peak: what the packing wastes" });
    if (local) cols.push({ label: "thread-local", num: true, key: "thread_local_bytes", test: "space-thread-local", title: "thread-local allocations" });
    cols.push({ label: "live", num: true, key: "live_bytes", test: "space-live", title: "bytes live at the peak step (the buffers listed below)" });
    cols.push({ label: "peak step", title: "the step where the most is live, and its instruction" });
    var rows = spaces.map(function (sp) {
      return h("tr", { data: { test: "space-row", space: sp.memory_space } }, cols.map(function (c) {
        if (c.key) return td(bytesSpan(sp[c.key], c.test, { space: sp.memory_space }), "num");
        if (c.label === "memory space") return td(spaceLabel(mem, im, sp.memory_space) + (sp.estimate ? " ~estimate" : ""), "name");
        return td(sp.peak_step === null || sp.peak_step === undefined ? "-" : group(sp.peak_step) + (sp.peak_instruction ? " (" + sp.peak_instruction + ")" : ""), "mono cut", sp.peak_instruction);
      }));
    });
    box.appendChild(h("div", { class: "spaces" }, [table(cols, rows, { box: false })]));
    if (mem.legend) box.appendChild(h("p", { class: "legend", data: { test: "legend" }, text: mem.legend }));
    return box;
  }

  // ---- a module -----------------------------------------------------------------------------
  function renderModule(im, mem, container, cost) {
    var head = h("header", {}, [
      h("h1", {}, [im.module || "(unnamed module)", mem && mem.backend ? h("span", { class: "badge", text: backendLabel(mem), data: { test: "backend" } }) : null,
        mem ? h("span", { class: "badge", text: mem.scheduled ? "scheduled" : "not scheduled" }) : null]),
      h("p", { class: "sub" }, [h("span", { class: "mono wrap", text: im.file || "" }), im.entry ? " · entry " : "", im.entry ? h("code", { text: im.entry }) : null]),
    ]);
    container.appendChild(head);
    container.appendChild(headline(mem, im));

    var notes = (data.notes || []).concat((mem && mem.notes) || []);
    if (notes.length) container.appendChild(h("div", { class: "notes", data: { test: "notes" } }, [h("ul", {}, notes.map(function (n) { return h("li", { text: n }); }))]));

    var charts = [];
    if (mem) {
      var sec = section("Memory over program order", "Bytes live at each step of the schedule, per memory space: the dashed level is the space's peak, the dashed line the step where the most is live. Hover for the value at a step.");
      (mem.timeline || []).forEach(function (t) {
        var sp = spaceOf(mem, t.memory_space);
        var label = spaceLabel(mem, im, t.memory_space) + " · " + group(t.length) + " steps" + (t.bucket > 1 ? " (each point the max of " + t.bucket + ")" : "") + (sp && sp.estimate ? " · estimate" : "");
        // A space holding a small share of the peak gets a lower chart.
        var c = drawChart(t, sp, label, !!sp && sp.peak_bytes * 20 < mem.peak_bytes);
        charts.push(c);
        sec.appendChild(c.element);
      });
      if (!(mem.timeline || []).length) sec.appendChild(h("p", { class: "empty", text: "No timeline: the module has no schedule to follow." }));
      container.appendChild(sec);
      liveAtPeak(mem, im, charts, container);
    }

    var roof = rooflineSection(cost);
    if (roof) container.appendChild(roof);

    var pad = paddingSection(im);
    if (pad) container.appendChild(pad);

    var totals = im.totals || [];
    var where = section("Where the bytes are", "Every value the module defines, counted once without liveness (an upper bound, not the peak).");
    if (totals.length) {
      where.appendChild(table([{ label: "memory space" }, { label: "values", num: true }, { label: "data", num: true }, { label: "buffers", num: true }, { label: "padding", num: true }],
        totals.map(function (t) { return h("tr", { data: { test: "totals-row", space: t.memory_space } }, [td(spaceLabel(mem, im, t.memory_space)), td(group(t.values), "num"), td(bytesSpan(t.logical_bytes), "num"), td(bytesSpan(t.physical_bytes), "num"), td(bytesSpan(t.padding_bytes), "num")]); }), { box: false }));
    }
    var largest = im.largest_buffers || [];
    if (largest.length) {
      var side = h("div", { class: "side" });
      var ofAll = im.largest_buffers_total > largest.length ? " (" + largest.length + " of " + group(im.largest_buffers_total) + ")" : "";
      where.appendChild(h("h3", { text: "Largest buffers" + ofAll }));
      var body = largest.map(function (b) {
        var tr = h("tr", { class: "pick", data: { test: "largest-row", name: b.name, bytes: b.physical_bytes } }, [td(b.name + indexText(b.index), "name"), td(tokens(b.shape), "shape"), td(bytesSpan(b.physical_bytes), "num"), td(bytesSpan(b.padding_bytes), "num"), td(b.opcode), td(spaceName(mem, im, b.memory_space))]);
        keyboard(tr);
        tr.addEventListener("click", function () {
          Array.prototype.forEach.call(tr.parentNode.querySelectorAll("tr.selected"), function (r) { r.classList.remove("selected"); });
          tr.classList.add("selected");
          side.textContent = ""; side.appendChild(bufferCard(b, mem, im, "largest-card"));
        });
        return tr;
      });
      where.appendChild(h("div", { class: "split" }, [h("div", { class: "main" }, [table([{ label: "value" }, { label: "shape" }, { label: "buffer", num: true }, { label: "padding", num: true }, { label: "opcode" }, { label: "space" }], body)]), side]));
      if (body.length) body[0].dispatchEvent(new Event("click"));
    }
    container.appendChild(where);

    var fk = im.fusions_by_kind || [], oc = im.opcodes || [];
    if (fk.length || oc.length) {
      var st = section("Fusions by kind and opcodes", group(im.instructions || 0) + " instructions in " + group(im.computations_total || 0) + " computations" + (im.computations_by_kind ? " (" + Object.keys(im.computations_by_kind).map(function (k) { return im.computations_by_kind[k] + " " + k; }).join(", ") + ")" : "") + ".");
      var cols = h("div", { class: "cols" });
      if (fk.length) cols.appendChild(h("div", { data: { test: "fusion-kinds" } }, [h("h3", { text: "Fusions by kind" }), barList(fk, function (r) { return r[0]; }, function (r) { return r[1]; }, function (r) { return group(r[1]); })]));
      if (oc.length) cols.appendChild(h("div", {}, [h("h3", { text: "Opcodes" + (im.opcodes_total ? " (" + oc.length + " of " + im.opcodes_total + ")" : "") }), barList(oc, function (r) { return r[0]; }, function (r) { return r[1]; }, function (r) { return group(r[1]); })]));
      st.appendChild(cols);
      container.appendChild(st);
    }

    var comp = compilerSection(mem, im);
    if (comp) container.appendChild(comp);

    var params = im.entry_parameters || [], outs = im.entry_outputs || [];
    if (params.length || outs.length) {
      var io = section("Entry parameters and outputs", "One row per array; the result's pointer table adds " + humanBytes(im.entry_output_table_bytes || 0) + ".");
      var leafRows = params.map(function (p) { return ["parameter " + p.parameter_number, p]; }).concat(outs.map(function (o) { return ["output " + indexText(o.index), o]; }));
      io.appendChild(table([{ label: "" }, { label: "name" }, { label: "shape" }, { label: "buffer", num: true }, { label: "padding", num: true }, { label: "space" }],
        leafRows.map(function (pr) { var p = pr[1]; return h("tr", {}, [td(pr[0]), td(p.name + indexText(p.index), "name"), td(tokens(p.shape), "shape"), td(bytesSpan(p.physical_bytes), "num"), td(bytesSpan(p.padding_bytes), "num"), td(spaceName(mem, im, p.memory_space))]); })));
      container.appendChild(io);
    }
  }

  // ---- several modules: one row each, then the chosen module's view -------------------------
  // A full page links rows to `#module=N` (so a view can be linked to); a notebook fragment,
  // which must not touch its page's URL, switches in place.
  var fullPage = root.dataset.page === "full";
  function overview(current, show) {
    var sec = section("Modules", "One row per module: its peak and parts (as above each module's view), the padding of the values it defines, and the backend. Click a module for its view below; click a figure's heading to sort.");
    sec.dataset.test = "overview";
    // The stylesheet sizes the columns (`ov-KEY`).
    var cols = [
      { key: "n", label: "#", num: true }, { key: "module", label: "module" }, { key: "file", label: "file" },
      { key: "peak", label: "peak", num: true }, { key: "static", label: "static", num: true },
      { key: "temp", label: "temp allocation", num: true }, { key: "padding", label: "padding", num: true },
      { key: "backend", label: "backend" },
    ];
    // Files under one folder are shown from there (the folder is said once, above the table).
    var dirs = inspectModules.map(function (im) { return (im.file || "").split("/").slice(0, -1); });
    var common = dirs.length ? dirs[0].slice() : [];
    dirs.forEach(function (d) { var k = 0; while (k < common.length && k < d.length && common[k] === d[k]) k++; common.length = k; });
    var prefix = common.length ? common.join("/") + "/" : "";
    if (prefix) sec.appendChild(h("p", { class: "sub" }, ["Files under ", h("code", { text: prefix, data: { test: "overview-folder" } }), "."]));
    var entries = inspectModules.map(function (im, i) {
      var mem = memoryFor(i, im), padding = null;
      (im.totals || []).forEach(function (t) { padding = (padding || 0) + (t.padding_bytes || 0); });
      return { n: i + 1, im: im, mem: mem, module: im.module || "(unnamed)", file: im.file || "",
        peak: mem ? mem.peak_bytes : null, static: mem ? mem.static_bytes : null, temp: mem ? mem.temp_allocation_bytes : null,
        padding: padding, backend: mem ? backendLabel(mem) : "", shown: (im.file || "").slice(prefix.length) };
    });
    var sort = { key: "n", down: false };
    var body = h("tbody");
    var ths = cols.map(function (c) {
      var th = h("th", { class: (c.num ? "num " : "") + "sortable", text: c.label });
      th.addEventListener("click", function () {
        sort = { key: c.key, down: sort.key === c.key ? !sort.down : c.num && c.key !== "n" };
        draw();
      });
      keyboard(th);
      return th;
    });
    function cmp(a, b) {
      var x = a[sort.key], y = b[sort.key];
      var r = x === y ? a.n - b.n : x === null ? 1 : y === null ? -1 : x < y ? -1 : 1;
      return sort.down && x !== y && x !== null && y !== null ? -r : r;
    }
    function draw() {
      body.textContent = "";
      ths.forEach(function (th, k) { th.classList.toggle("sorted", cols[k].key === sort.key); });
      entries.slice().sort(cmp).forEach(function (e) {
        var link = h("a", { href: "#module=" + e.n, text: e.module, title: e.module });
        link.addEventListener("click", function (ev) {
          if (fullPage) return;  // the hash change shows it
          ev.preventDefault(); show(e.n, true);
        });
        var bytes = function (n, test) {
          var cell = h("td", { class: "num cut" }, [n === null ? "-" : bytesSpan(n, test)]);
          if (test === "overview-peak" && e.mem && !e.mem.scheduled) cell.appendChild(h("span", { class: "muted", text: " ~", title: "estimate: the dump is not scheduled" }));
          return cell;
        };
        var tr = h("tr", { class: "pick" + (e.n === current ? " selected" : ""), data: { test: "overview-row", module: e.n } }, [
          td(String(e.n), "num"), h("td", { class: "cut name" }, [link]), cutCell(e.shown, "mono", e.file),
          bytes(e.peak, "overview-peak"), bytes(e.static, "overview-static"), bytes(e.temp, "overview-temp"), bytes(e.padding, "overview-padding"),
          cutCell(e.backend, "", e.mem && e.mem.backend_assumed ? "assumed: nothing in the dump names the backend (--backend to choose)" : e.backend),
        ]);
        tr.addEventListener("click", function (ev) { if (ev.target !== link) link.click(); });
        body.appendChild(tr);
      });
    }
    var colgroup = h("colgroup", {}, cols.map(function (c) { return h("col", { class: "ov-" + c.key }); }));
    sec.appendChild(h("div", { class: "tablebox whole" }, [h("table", { class: "fixed overview", data: { test: "overview-table" } }, [colgroup, h("thead", {}, [h("tr", {}, ths)]), body])]));
    draw();
    return sec;
  }

  function moduleNumber() {
    var n = parseInt(hashOptions().module, 10);
    return n >= 1 && n <= inspectModules.length ? n : 1;
  }
  function applyOnly() {
    // `#only=SECTION-ID[,SECTION-ID...]` shows the headers and those sections alone (for
    // screenshots and links).
    var only = hashOptions().only;
    if (only) Array.prototype.forEach.call(root.querySelectorAll("section"), function (sec) { sec.hidden = only.split(",").indexOf(sec.id) < 0; });
  }

  // ---- diff (two dumps: what changed from the first to the second) ------------------------
  function signedBytes(n, test, extra) {
    var span = bytesSpan(Math.abs(n), test, extra);
    span.dataset.bytes = String(n);
    span.textContent = (n > 0 ? "+" : n < 0 ? "-" : "") + humanBytes(Math.abs(n));
    span.className = n > 0 ? "grew" : n < 0 ? "shrank" : "";
    return span;
  }
  function stepText(st) { return st ? st.instruction + " (" + st.step + "/" + st.of + ")" : "-"; }
  function renderDiff(d, container) {
    var names = (d.old_module || "old") + " → " + (d.new_module || "new");
    var sec = section("What changed: " + names, d.old_file === d.new_file ? d.old_file : d.old_file + " → " + d.new_file);
    sec.dataset.test = "diff";
    (d.notes || []).forEach(function (n) { sec.appendChild(h("p", { class: "notes", text: "note: " + n })); });
    var peak = d.peak;
    if (peak) {
      var cards = h("div", { class: "cards" });
      cards.appendChild(card("Peak · old", bytesSpan(peak.old, "diff-peak-old")));
      cards.appendChild(card("Peak · new", bytesSpan(peak.new, "diff-peak-new")));
      cards.appendChild(card("Change", signedBytes(peak.delta, "diff-peak-delta"), peak.percent === null ? "" : (peak.percent > 0 ? "+" : "") + peak.percent.toFixed(1) + "%"));
      sec.appendChild(cards);
      sec.appendChild(h("h3", { text: "Per memory space" }));
      sec.appendChild(table([{ label: "space" }, { label: "old", num: true }, { label: "new", num: true }, { label: "change", num: true }, { label: "static", num: true }, { label: "temp", num: true }, { label: "peak step" }],
        peak.spaces.map(function (sp) {
          var moved = sp.peak_step.moved ? stepText(sp.peak_step.old) + " → " + stepText(sp.peak_step.new) : stepText(sp.peak_step.new);
          return h("tr", { data: { test: "diff-space", space: sp.memory_space } }, [
            td(sp.label + (sp.estimate.old || sp.estimate.new ? " (estimate)" : "")),
            td(bytesSpan(sp.old), "num"), td(bytesSpan(sp.new), "num"), td(signedBytes(sp.delta, "diff-space-delta"), "num"),
            td(humanBytes(sp.static.old) + " → " + humanBytes(sp.static.new), "num"), td(humanBytes(sp.temp.old) + " → " + humanBytes(sp.temp.new), "num"), td(moved, "mono")]);
        })));
      if (peak.delta) {
        sec.appendChild(h("h3", { text: "Why: the change by " + peak.by + ", paired across the compiles" }));
        var rows = peak.attribution.map(function (r) {
          return h("tr", { data: { test: "diff-row", key: r.key === null ? "" : r.key, delta: r.delta_bytes } }, [
            td(r.key === null ? "(no " + peak.by + ")" : r.key, "name"), td(bytesSpan(r.old_bytes), "num"), td(bytesSpan(r.new_bytes), "num"), td(signedBytes(r.delta_bytes), "num")]);
        });
        if (peak.attribution_total > peak.attribution.length) {
          rows.push(h("tr", { data: { test: "diff-row", key: "(more)", delta: peak.attribution_rest_bytes } }, [td((peak.attribution_total - peak.attribution.length) + " more"), td(""), td(""), td(signedBytes(peak.attribution_rest_bytes), "num")]));
        }
        peak.explained.forEach(function (r) {
          if (r.delta_bytes) rows.push(h("tr", { data: { test: "diff-row", key: r.key, delta: r.delta_bytes } }, [td(r.key), td(bytesSpan(r.old_bytes), "num"), td(bytesSpan(r.new_bytes), "num"), td(signedBytes(r.delta_bytes), "num")]));
        });
        rows.push(h("tr", { data: { test: "diff-row", key: "unattributed", delta: peak.unattributed_bytes }, title: peak.unattributed_note }, [td("unattributed"), td(""), td(""), td(signedBytes(peak.unattributed_bytes), "num")]));
        rows.push(h("tr", { class: "total" }, [td("total"), td(bytesSpan(peak.old), "num"), td(bytesSpan(peak.new), "num"), td(signedBytes(peak.delta), "num")]));
        sec.appendChild(table([{ label: peak.by }, { label: "old", num: true }, { label: "new", num: true }, { label: "change", num: true }], rows));
        if (peak.buffers.length) {
          sec.appendChild(h("h3", { text: "Buffers held at the peak that changed (" + peak.buffers.length + " of " + group(peak.buffers_total) + " pairs)" }));
          sec.appendChild(table([{ label: "change", num: true }, { label: "old" }, { label: "new" }, { label: "paired by" }, { label: "source" }],
            peak.buffers.map(function (p) {
              var at = p.new || p.old;
              function side(b) { return b ? h("span", {}, [h("span", { class: "name", text: b.name + indexText(b.index) + " " }), tokens(b.shape.charAt(0) === "(" ? "(tuple table)" : b.shape, "shape")]) : "-"; }
              return h("tr", { data: { test: "diff-buffer", delta: p.delta_bytes } }, [td(signedBytes(p.delta_bytes), "num"), td(side(p.old)), td(side(p.new)), td(p.how), td(at.source || at.op_name || "", "mono")]);
            })));
        }
      }
    }
    var inst = d.instructions, comps = d.computations;
    sec.appendChild(h("h3", { text: "Structure (paired by what survives recompilation, not by name)" }));
    sec.appendChild(h("p", { data: { test: "diff-structure" } }, [
      group(comps.paired) + " computations paired (" + comps.added.length + " added, " + comps.removed.length + " removed); " +
      group(inst.paired) + " instructions paired: " + group(inst.added_total) + " added, " + group(inst.removed_total) + " removed, " +
      group(inst.changed_total) + " changed, " + group(inst.renamed) + " renamed by numbering only."]));
    if (inst.changes_by_kind.length) {
      sec.appendChild(table([{ label: "change" }, { label: "instructions", num: true }],
        inst.changes_by_kind.map(function (k) { return h("tr", { data: { test: "diff-change-kind" } }, [td(k[0], "mono"), td(group(k[1]), "num")]); })));
    }
    container.appendChild(sec);
  }

  function render() {
    app.textContent = "";
    if (data.diff) renderDiff(data.diff, app);
    var view = h("div", { class: "module-view" });
    var current = 0, top = null, pick = null;
    function show(n, scroll) {
      current = n;
      view.textContent = "";
      var im = inspectModules[n - 1];
      renderModule(im, memoryFor(n - 1, im), view, costFor(n - 1, im));
      if (pick) pick.value = String(n);
      if (top) Array.prototype.forEach.call(top.querySelectorAll("tr[data-test=overview-row]"), function (tr) { tr.classList.toggle("selected", tr.dataset.module === String(n)); });
      applyOnly();
      if (scroll) view.scrollIntoView({ block: "start" });
    }
    if (inspectModules.length > 1) {
      current = moduleNumber();
      top = overview(current, show);
      app.appendChild(top);
      pick = h("select", { "aria-label": "module", data: { test: "module-picker" } }, inspectModules.map(function (m, i) {
        return h("option", { value: i + 1, text: (i + 1) + ". " + (m.module || "(unnamed)") + " — " + (m.file || "") });
      }));
      pick.addEventListener("change", function () {
        if (fullPage) location.hash = "module=" + pick.value; else show(+pick.value, false);
      });
      app.appendChild(h("div", { class: "modules" }, ["Module ", pick, " of " + inspectModules.length]));
      if (fullPage) window.addEventListener("hashchange", function () { var n = moduleNumber(); show(n, n !== current); });
    }
    app.appendChild(view);
    if (inspectModules.length) show(moduleNumber(), false);
    else view.appendChild(h("p", { class: "empty", text: "The report holds no module." }));
    app.appendChild(h("footer", {}, ["Made by hlo-layout from the dump alone. The page draws from the JSON in its ",
      h("code", { text: 'script#hlo-layout-data' }), " element ({\"inspect\": …, \"memory\": …, \"cost\": …}); it loads nothing from the network."]));
  }

  try {
    render();
    root.dataset.rendered = "ok";
  } catch (err) {
    root.dataset.rendered = "error";
    app.appendChild(h("pre", { class: "notes", data: { test: "render-error" }, text: "The report could not be drawn: " + (err && err.stack || err) }));
  }
  var now = (window.performance && performance.now()) || 0;
  root.dataset.renderMs = String(Math.round(now - t0));
  root.dataset.loadedMs = String(Math.round(now));
})();
