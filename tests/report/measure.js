/* Run by tests/report/test_html_browser.py after the report has drawn itself: the geometry of
   the tables that must keep each row one line high, written into the page as JSON (a
   <pre data-test="measure">) for --dump-dom to carry out. */
(function () {
  function box(e) { var r = e.getBoundingClientRect(); return [r.left, r.right, r.top, r.bottom]; }
  function lineHeight(e) {
    var probe = document.createElement("span");
    probe.textContent = "Mg";
    probe.style.whiteSpace = "nowrap";
    e.appendChild(probe);
    var h = probe.getBoundingClientRect().height;
    e.removeChild(probe);
    return h;
  }
  var out = {
    innerWidth: window.innerWidth, pageWidth: document.documentElement.scrollWidth, tables: [],
  };
  document.querySelectorAll("table.fixed").forEach(function (t) {
    var holder = t.closest(".tablebox") || t.parentNode;
    var rows = [];
    t.querySelectorAll("tbody tr").forEach(function (tr, i) {
      if (i >= 60 || tr.hidden) return;
      var cells = [];
      tr.querySelectorAll("td").forEach(function (td) {
        if (td.getBoundingClientRect().width < 1) return;  // a column left out at this width
        var cs = getComputedStyle(td);
        cells.push({ cls: td.className, test: td.dataset.test || "", box: box(td),
          content: td.getBoundingClientRect().height - parseFloat(cs.paddingTop) - parseFloat(cs.paddingBottom) - parseFloat(cs.borderBottomWidth),
          line: lineHeight(td) });
      });
      rows.push({ test: tr.dataset.test || "", height: tr.getBoundingClientRect().height, cells: cells });
    });
    out.tables.push({ test: t.dataset.test || t.className, box: box(t), holder: box(holder),
      scrollWidth: holder.scrollWidth, clientWidth: holder.clientWidth, rows: rows });
  });
  var pre = document.createElement("pre");
  pre.dataset.test = "measure";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
