/* perfmon's HTML job report: draws the charts of the data element with
 * uPlot (templates/html/report.js; docs/report.md, "The HTML report").
 * Every time plot shares one time axis: a zoom on one (drag) is set on
 * all, a double-click shows the whole job on all.  A click on a node in a
 * legend or in the statistics table highlights it in every chart.  Names
 * are set as text (textContent), never as markup.  The location's hash
 * may say "node=NAME", "zoom=FROM,TO" (seconds since the start),
 * "find=TEXT" (the statistics' rows whose node name holds it) and "sort=N"
 * (the statistics sorted by column N, largest first): the state to open
 * with, and what the tests drive.
 */
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('pm-data').textContent);
  var X0 = D.elapsed ? 0 : D.t0, X1 = X0 + D.t1;
  var vals = {}, xs = {};
  var plots = [], syncing = false, building = true, hl = -1;
  var PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2',
                 '#7f7f7f', '#bcbd22', '#17becf', '#393b79', '#637939', '#8c6d31', '#843c39',
                 '#7b4173', '#3182bd'];
  var PHASE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#b07aa1', '#76b7b2', '#edc948',
               '#ff9da7', '#9c755f', '#bab0ac'];

  /* The blobs: D.blobs[i] = [count, bytes an element], one after the
   * other in the pm-bin element, each byte-shuffled (all first bytes,
   * then all second bytes ...), the whole a zlib stream in base64 when
   * D.packed (inflated by the browser's DecompressionStream). */
  var BIN = null, OFF = [];
  function unbase64(s) {
    var bin = atob(s), u8 = new Uint8Array(bin.length);
    for (var k = 0; k < bin.length; k++) u8[k] = bin.charCodeAt(k);
    return u8;
  }
  function load() {
    var at = 0;
    D.blobs.forEach(function (b) { OFF.push(at); at += b[0] * b[1]; });
    var u8 = unbase64(document.getElementById('pm-bin').textContent);
    if (!D.packed) return Promise.resolve(u8);
    var s = new Blob([u8]).stream().pipeThrough(new DecompressionStream('deflate'));
    return new Response(s).arrayBuffer().then(function (b) { return new Uint8Array(b); });
  }
  function bytesOf(i) {
    var n = D.blobs[i][0], e = D.blobs[i][1], p = BIN.subarray(OFF[i], OFF[i] + n * e);
    if (e === 1) return p;
    var out = new Uint8Array(n * e);
    for (var j = 0; j < e; j++)
      for (var k = 0, q = j * n; k < n; k++) out[k * e + j] = p[q + k];
    return out;
  }
  /* Blob i as float32 (little-endian); NaN (no value) as null. */
  function floats(i) {
    var u8 = bytesOf(i), n = u8.length >> 2, dv = new DataView(u8.buffer), out = new Array(n);
    for (var k = 0; k < n; k++) {
      var v = dv.getFloat32(4 * k, true);
      out[k] = v === v ? v : null;
    }
    return out;
  }
  function arr(i) { return vals[i] || (vals[i] = floats(i)); }
  /* Times: seconds since the job's start, on the axis's scale. */
  function xarr(i) {
    if (!xs[i]) {
      var a = floats(i);
      for (var k = 0; k < a.length; k++) a[k] = X0 + a[k];
      xs[i] = a;
    }
    return xs[i];
  }

  function num(v) {
    if (v == null) return '\u2013';
    var a = Math.abs(v);
    if (a !== 0 && (a >= 1e9 || a < 1e-4)) return v.toExponential(5);
    return String(+v.toPrecision(6));
  }
  function axisNum(v) {
    var a = Math.abs(v);
    if (a >= 1e9 || (a !== 0 && a < 1e-3)) return v.toExponential(1);
    if (a >= 1e6) return +(v / 1e6).toPrecision(4) + 'M';
    if (a >= 1e4) return +(v / 1e3).toPrecision(4) + 'k';
    return String(+v.toPrecision(4));
  }
  function pad(n) { return (n < 10 ? '0' : '') + n; }
  function elapsedText(s) {
    var neg = s < 0;
    s = Math.abs(s);
    var h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, sec = s - 3600 * h - 60 * m;
    var ss = sec.toFixed(sec % 1 ? 1 : 0);
    return (neg ? '-' : '') + h + ':' + pad(m) + ':' + (sec < 10 ? '0' : '') + ss;
  }
  function timeText(x) {
    if (x == null) return '\u2013';
    if (D.elapsed) return elapsedText(x);
    var d = new Date(Math.round(x * 1000)).toISOString();
    return d.slice(0, 10) + ' ' + d.slice(11, 19) + ' UTC';
  }

  /* Phases ([kind, from, to], seconds since the job's start) merged per
   * kind where they overlap: [kind, from, to] on the axis's scale.  Job B's
   * (this report's) and, with --compare, job A's on the same elapsed axis. */
  function merged(list) {
    var by = {}, out = [];
    list.forEach(function (p) { (by[p[0]] = by[p[0]] || []).push([X0 + p[1], X0 + p[2]]); });
    Object.keys(by).forEach(function (k) {
      var s = by[k].sort(function (a, b) { return a[0] - b[0]; }), cur = null;
      s.forEach(function (p) {
        if (cur && p[0] <= cur[2]) cur[2] = Math.max(cur[2], p[1]);
        else out.push(cur = [+k, p[0], p[1]]);
      });
    });
    return out;
  }
  var phases = merged(D.phases), aphases = merged(D.aphases || []);

  /* An overlay chart's phase lanes, above its plot: job A's phases, then
   * job B's, a bar per phase in its kind's colour with the kind's name
   * where it fits.  What was drawn (in CSS pixels from the canvas's left)
   * is the figure's data-lanes, for the reader of the page's state. */
  var LANE = 14;
  function lanes(u) {
    var ctx = u.ctx, b = u.bbox, r = uPlot.pxRatio, h = LANE * r, out = [];
    ctx.save();
    ctx.font = Math.round(11 * r) + 'px system-ui, "DejaVu Sans", sans-serif';
    ctx.textBaseline = 'middle';
    [['A', aphases], ['B', phases]].forEach(function (lane, j) {
      var y = b.top - (2 - j) * (h + r) - 2 * r;
      ctx.fillStyle = '#444';
      ctx.textAlign = 'right';
      ctx.fillText(lane[0], b.left - 4 * r, y + h / 2);
      ctx.save();
      ctx.beginPath();
      ctx.rect(b.left, y, b.width, h);
      ctx.clip();
      ctx.textAlign = 'left';
      lane[1].forEach(function (p) {
        var x0 = Math.max(b.left, u.valToPos(p[1], 'x', true));
        var x1 = Math.min(b.left + b.width, u.valToPos(p[2], 'x', true));
        if (x1 <= x0) return;
        ctx.fillStyle = PHASE[p[0] % PHASE.length];
        ctx.fillRect(x0, y, Math.max(r, x1 - x0), h);
        var name = D.kinds[p[0]];
        if (ctx.measureText(name).width + 6 * r <= x1 - x0) {
          ctx.fillStyle = '#fff';
          ctx.fillText(name, x0 + 3 * r, y + h / 2);
        }
        out.push([lane[0], name, +(p[1] - X0).toFixed(3), +(p[2] - X0).toFixed(3),
                  +(x0 / r).toFixed(1), +(x1 / r).toFixed(1), +((y + h / 2) / r).toFixed(1)]);
      });
      ctx.restore();
    });
    ctx.restore();
    u.root.parentNode.parentNode.dataset.lanes = JSON.stringify(out);
  }

  function shade(u, repairs) {
    var ctx = u.ctx, b = u.bbox;
    ctx.save();
    ctx.beginPath();
    ctx.rect(b.left, b.top, b.width, b.height);
    ctx.clip();
    function span(t0, t1, fill) {
      var x0 = u.valToPos(t0, 'x', true), x1 = u.valToPos(t1, 'x', true);
      ctx.fillStyle = fill;
      ctx.fillRect(x0, b.top, Math.max(1, x1 - x0), b.height);
    }
    phases.forEach(function (p) { span(p[1], p[2], PHASE[p[0] % PHASE.length] + '26'); });
    repairs.forEach(function (r) { span(X0 + r[0], X0 + r[1], 'rgba(120,120,120,0.18)'); });
    ctx.restore();
  }

  /* Colour maps (own canvas code: uPlot has none): a cell per node (or
   * merged rows) and grid column, 0..254 between the map's lo and hi,
   * 255 no data; viridis-like colours. */
  var heats = [];
  var STOPS = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
  function rgb(q) {
    var f = q / 254 * 4, i = Math.min(3, Math.floor(f)), w = f - i, a = STOPS[i], b = STOPS[i + 1];
    return [a[0] + (b[0] - a[0]) * w, a[1] + (b[1] - a[1]) * w, a[2] + (b[2] - a[2]) * w];
  }
  function heat(h) {
    var fig = document.getElementById(h.id), box = fig.querySelector('.plot');
    var info = fig.querySelector('.heat-info');
    var cells = bytesOf(h.cells), nc = h.ncols, nr = cells.length / nc, k;
    var src = document.createElement('canvas');
    src.width = nc;
    src.height = nr;
    var sctx = src.getContext('2d'), img = sctx.createImageData(nc, nr);
    for (k = 0; k < cells.length; k++) {
      var q = cells[k], c = q === 255 ? [225, 225, 225] : rgb(q);
      img.data[4 * k] = c[0];
      img.data[4 * k + 1] = c[1];
      img.data[4 * k + 2] = c[2];
      img.data[4 * k + 3] = 255;
    }
    sctx.putImageData(img, 0, 0);
    var W = Math.max(300, fig.clientWidth || 800), H = Math.min(600, Math.max(120, 3 * nr));
    var cv = document.createElement('canvas');
    cv.width = W;
    cv.height = H;
    box.appendChild(cv);
    var t = xarr(h.t), step = nc > 1 ? (t[nc - 1] - t[0]) / (nc - 1) : 1;
    var unit = h.unit ? ' ' + h.unit : '';
    var o = { x0: X0, x1: X1 };
    function cols() { return [(o.x0 - t[0]) / step + 0.5, (o.x1 - t[0]) / step + 0.5]; }
    function nodesOf(r) { return h.rows.slice(r * h.per, r * h.per + h.per); }
    function legend() {
      info.textContent = 'Colour: ' + num(h.lo) + unit + ' (dark) to ' + num(h.hi) + unit +
        ' (yellow); grey: no data. ' + (h.per > 1 ? h.per + ' nodes a row. ' : '') +
        'Point at a cell for its node and value; click to highlight the node.';
    }
    o.draw = function () {
      var ctx = cv.getContext('2d'), c = cols();
      ctx.imageSmoothingEnabled = false;
      ctx.fillStyle = '#fff';
      ctx.fillRect(0, 0, W, H);
      ctx.drawImage(src, c[0], 0, c[1] - c[0], nr, 0, 0, W, H);
      var mine = false;
      /* The highlighted node's row outlined: inside a row of 6 pixels or
       * more, else around it, so that a row of a pixel (512 nodes) still
       * shows its colours between the two lines. */
      var rh = H / nr;
      for (var r = 0; r < nr && hl >= 0; r++) {
        if (nodesOf(r).indexOf(hl) < 0) continue;
        ctx.strokeStyle = '#e00';
        ctx.lineWidth = 2;
        if (rh >= 6) ctx.strokeRect(1, r * rh + 1, W - 2, rh - 2);
        else ctx.strokeRect(1, r * rh - 3, W - 2, rh + 6);
        mine = true;
      }
      fig.dataset.hl = mine ? D.nodes[hl] : '';
      fig.dataset.xmin = (o.x0 - X0).toFixed(3);
      fig.dataset.xmax = (o.x1 - X0).toFixed(3);
    };
    function cell(e) {
      var b = cv.getBoundingClientRect(), c = cols();
      var r = Math.floor((e.clientY - b.top) / b.height * nr);
      var col = Math.floor(c[0] + (e.clientX - b.left) / b.width * (c[1] - c[0]));
      return r >= 0 && r < nr && col >= 0 && col < nc ? [r, col] : null;
    }
    cv.addEventListener('mousemove', function (e) {
      var rc = cell(e);
      if (!rc) return legend();
      var q = cells[rc[0] * nc + rc[1]];
      var names = nodesOf(rc[0]).map(function (n) { return D.nodes[n]; });
      info.textContent = names.slice(0, 3).join(', ') + (names.length > 3 ? ' and ' +
        (names.length - 3) + ' more' : '') + ' at ' + timeText(t[rc[1]]) + ': ' +
        (q === 255 ? 'no data' : '\u2248 ' + num(h.lo + q / 254 * (h.hi - h.lo)) + unit);
    });
    cv.addEventListener('mouseleave', legend);
    cv.addEventListener('click', function (e) {
      var rc = cell(e);
      if (rc && h.per === 1) highlight(hl === h.rows[rc[0]] ? -1 : h.rows[rc[0]]);
    });
    legend();
    return o;
  }

  /* The phase timeline: a row per node, a bar per phase coloured by kind;
   * the pointer names the bar, a click zooms every chart to it. */
  function timeline(tl) {
    var fig = document.getElementById('timeline');
    if (!fig) return null;
    var box = fig.querySelector('.plot'), info = fig.querySelector('.heat-info');
    var nr = tl.rows.length, rowH = Math.max(2, Math.min(18, Math.floor(480 / Math.max(1, nr))));
    var W = Math.max(300, fig.clientWidth || 800), H = nr * rowH + 4;
    var cv = document.createElement('canvas');
    cv.width = W;
    cv.height = H;
    box.appendChild(cv);
    var o = { x0: X0, x1: X1 };
    function px(x) { return (x - o.x0) / (o.x1 - o.x0) * W; }
    function legend() {
      info.textContent = nr + ' rows, ' + tl.bars.length + ' phases' +
        (tl.more ? ' (' + tl.more + ' more not shown)' : '') +
        '. Point at a phase for its node and times; click to zoom to it.';
    }
    o.draw = function () {
      var ctx = cv.getContext('2d');
      ctx.fillStyle = '#fff';
      ctx.fillRect(0, 0, W, H);
      tl.bars.forEach(function (b) {
        var x0 = px(X0 + b[2]), x1 = px(X0 + b[3]);
        if (x1 < 0 || x0 > W) return;
        ctx.fillStyle = PHASE[b[1] % PHASE.length];
        ctx.fillRect(x0, 2 + b[0] * rowH, Math.max(1, x1 - x0), Math.max(1, rowH - 1));
      });
      fig.dataset.xmin = (o.x0 - X0).toFixed(3);
      fig.dataset.xmax = (o.x1 - X0).toFixed(3);
    };
    function bar(e) {
      var b = cv.getBoundingClientRect();
      var x = o.x0 + (e.clientX - b.left) / b.width * (o.x1 - o.x0) - X0;
      var r = Math.floor(((e.clientY - b.top) / b.height * H - 2) / rowH);
      for (var i = tl.bars.length - 1; i >= 0; i--)
        if (tl.bars[i][0] === r && tl.bars[i][2] <= x && x <= tl.bars[i][3]) return tl.bars[i];
      return null;
    }
    cv.addEventListener('mousemove', function (e) {
      var p = bar(e);
      if (!p) return legend();
      info.textContent = tl.rows[p[0]] + ': ' + D.kinds[p[1]] + ', ' + timeText(X0 + p[2]) +
        ' to ' + timeText(X0 + p[3]) + ' (' + num(p[3] - p[2]) + ' s)';
    });
    cv.addEventListener('mouseleave', legend);
    cv.addEventListener('click', function (e) {
      var p = bar(e);
      if (p && p[3] > p[2]) zoomAll(X0 + p[2], X0 + p[3]);
    });
    legend();
    return o;
  }

  /* The range every time plot shows (zx0..zx1), set on the plots drawn so
   * far; a plot drawn later starts with it. */
  var zx0 = X0, zx1 = X1, seen = [];
  function markRange(f) {
    f.dataset.xmin = (zx0 - X0).toFixed(3);
    f.dataset.xmax = (zx1 - X0).toFixed(3);
  }
  function zoomAll(mn, mx, except) {
    var t = performance.now();
    zx0 = mn;
    zx1 = mx;
    /* The charts near the window now; the others when they come near
     * (seen[i] false: resync() as it scrolls into view). */
    syncing = true;
    plots.forEach(function (u, i) {
      if (!u || u === except) return;
      if (seen[i] === false) {
        u.pmStale = true;
        u.root.parentNode.parentNode.dataset.stale = '1';
      } else u.setScale('x', { min: mn, max: mx });
    });
    syncing = false;
    heats.forEach(function (o) { o.x0 = mn; o.x1 = mx; o.draw(); });
    D.charts.forEach(function (c) { markRange(document.getElementById(c.id)); });
    /* uPlot redraws in a microtask: this one runs after them. */
    Promise.resolve().then(function () {
      document.body.dataset.zoomMs = (performance.now() - t).toFixed(1);
    });
  }
  function resync(u) {
    if (!u || !u.pmStale) return;
    u.pmStale = false;
    delete u.root.parentNode.parentNode.dataset.stale;
    syncing = true;
    u.setScale('x', { min: zx0, max: zx1 });
    syncing = false;
  }
  function onScale(u, key) {
    if (key === 'y') {
      /* The value range drawn, for the reader of the page's state. */
      var f = u.root.parentNode.parentNode;
      f.dataset.ymin = String(+u.scales.y.min.toPrecision(6));
      f.dataset.ymax = String(+u.scales.y.max.toPrecision(6));
    }
    if (key !== 'x' || syncing || building) return;
    zoomAll(u.scales.x.min, u.scales.x.max, u);
  }

  /* Tables [x, y1, y2 ...] with their own ascending times as one table on
   * the union of the times (uPlot's data), as uPlot.join does: a series
   * has undefined where it has no point (the line goes on across it) and
   * keeps its null gaps.  A merge of sorted arrays: uPlot.join took 300 ms
   * a chart for a band of 4,000 points and three whole day-long lines. */
  function join(tables) {
    var n = 0, t, k, i;
    for (t = 0; t < tables.length; t++) n += tables[t][0].length;
    var all = new Float64Array(n);
    for (t = 0, k = 0; t < tables.length; t++)
      for (i = 0; i < tables[t][0].length; i++) all[k++] = tables[t][0][i];
    all.sort();
    var xs = [];
    for (i = 0; i < n; i++) if (i === 0 || all[i] !== all[i - 1]) xs.push(all[i]);
    var out = [xs];
    tables.forEach(function (tb) {
      var x = tb[0], cols = [];
      for (var s = 1; s < tb.length; s++) cols.push(new Array(xs.length));
      for (var j = 0, p = 0; j < x.length; j++) {
        while (xs[p] < x[j]) p++;
        for (s = 1; s < tb.length; s++) cols[s - 1][p] = tb[s][j];
      }
      out.push.apply(out, cols);
    });
    return out;
  }

  /* A node on one plot: its line (focused), or in a band chart of many
   * nodes its min/max per pyramid column (the last two series). */
  function hlPlot(u) {
    var c = u.pmChart, fig = u.root.parentNode.parentNode, name = '';
    var i = hl >= 0 ? u.pmNodes.indexOf(hl) : -1;
    if (c.pyr) {
      var p = c.pyr, n = p.n, tb = u.pmTables[u.pmTables.length - 1];
      var lo = arr(p.lo), hi = arr(p.hi), on = hl >= 0 && i < 0;
      tb[1] = on ? hi.slice(hl * n, hl * n + n) : new Array(n).fill(null);
      tb[2] = on ? lo.slice(hl * n, hl * n + n) : new Array(n).fill(null);
      var rows = u.root.querySelectorAll('.u-legend tr.u-series');
      var k = u.series.length - 2;
      if (rows[k]) rows[k].querySelector('.u-label').textContent = on ? D.nodes[hl] + ' max' : 'node max';
      if (rows[k + 1]) rows[k + 1].querySelector('.u-label').textContent = on ? D.nodes[hl] + ' min' : 'node min';
      u.setData(join(u.pmTables), false);
      /* the node's max and min both at full strength over the band: no
       * series focused (focus would dim all but one of the pair) */
      if (on && tb[1].some(function (v) { return v != null; })) name = D.nodes[hl];
    }
    if (i > 0) name = D.nodes[hl];
    u.setSeries(i > 0 ? i : null, { focus: true });
    fig.dataset.hl = name;
  }
  function highlight(node) {
    hl = node;
    plots.forEach(function (u) { if (u) hlPlot(u); });
    var rows = document.querySelectorAll('#nodes tbody tr');
    for (var k = 0; k < rows.length; k++)
      rows[k].classList.toggle('hl', +rows[k].dataset.node === hl);
    heats.forEach(function (o) { o.draw(); });
  }

  function chart(c) {
    var fig = document.getElementById(c.id), el = fig.querySelector('.plot');
    var unit = c.unit ? ' ' + c.unit : '';
    var fv = function (u, v) { return v == null ? '\u2013' : num(v) + unit; };
    var path = c.step === 1 ? uPlot.paths.stepped({ align: -1 })
             : c.step === 2 ? uPlot.paths.stepped({ align: 1 }) : undefined;
    var tables = [], series = [{ label: 'Time', value: function (u, v) { return timeText(v); } }];
    var nodes = [-1], bands = [];
    if (c.band) {
      var b = c.band, base = series.length;
      tables.push([xarr(b.t), arr(b.lo), arr(b.p5), arr(b.mid), arr(b.p95), arr(b.hi)]);
      [['min', 'rgba(43,79,140,0.45)', 1], ['5th pct', 'rgba(43,79,140,0.6)', 1],
       ['median', '#2b4f8c', 1.5], ['95th pct', 'rgba(43,79,140,0.6)', 1],
       ['max', 'rgba(43,79,140,0.45)', 1]].forEach(function (s) {
        series.push({ label: s[0], stroke: s[1], width: s[2], value: fv, paths: path });
        nodes.push(-1);
      });
      bands.push({ series: [base + 4, base], fill: 'rgba(43,79,140,0.10)' },
                 { series: [base + 3, base + 1], fill: 'rgba(43,79,140,0.22)' });
    }
    var lines = c.lines.map(function (l) { return [xarr(l.t), l]; });
    (c.rows || []).forEach(function (l) { lines.push([xarr(l.t), l]); });
    lines.forEach(function (xl, i) {
      tables.push([xl[0], arr(xl[1].v)]);
      /* a comparison's overlay: A solid, B dashed (as in the PDF) */
      series.push({ label: xl[1].label, stroke: PALETTE[i % PALETTE.length], width: 1.25,
                    value: fv, paths: path, dash: c.cmp && i === 1 ? [6, 4] : undefined });
      nodes.push(xl[1].node);
    });
    if (c.pyr) {
      var n = c.pyr.n, k = series.length;
      tables.push([xarr(c.pyr.t), new Array(n).fill(null), new Array(n).fill(null)]);
      var step = uPlot.paths.stepped({ align: 1 });
      series.push({ label: 'node max', stroke: '#d62728', width: 1.25, value: fv, paths: step },
                  { label: 'node min', stroke: '#d62728', width: 1.25, value: fv, paths: step });
      nodes.push(-1, -1);
      bands.push({ series: [k, k + 1], fill: 'rgba(214,39,40,0.25)' });
    }
    var data = tables.length === 1 ? tables[0] : join(tables);
    var axes = [{}, { label: c.ylabel, size: 56, values: function (u, s) { return s.map(axisNum); } }];
    axes[0].values = D.elapsed ? function (u, s) { return s.map(elapsedText); }
      : function (u, s) {
        return s.map(function (x) { return new Date(x * 1000).toISOString().slice(11, 19); });
      };
    var opts = {
      width: Math.max(300, fig.clientWidth || 800), height: 240,
      /* room on the right for a time label on the range's last tick */
      padding: [null, 30, null, null],
      series: series, bands: bands, axes: axes,
      scales: { x: { time: !D.elapsed } },
      tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1e3), 'Etc/UTC'); },
      focus: { alpha: 0.2 },
      cursor: {
        sync: { key: 'pm', setSeries: false },
        focus: { prox: -1 },
        bind: { dblclick: function () { return function () { zoomAll(X0, X1); return null; }; } }
      },
      hooks: {
        setScale: [onScale],
        drawClear: [function (u) { shade(u, c.repairs); if (c.cmp) lanes(u); }]
      }
    };
    /* room above an overlay's plot for its two phase lanes */
    if (c.cmp && (phases.length || aphases.length)) opts.padding[0] = 2 * LANE + 8;
    building = true;
    var u = new uPlot(opts, data, el);
    u.pmNodes = nodes;
    u.pmChart = c;
    u.pmTables = tables;
    if (zx0 !== X0 || zx1 !== X1) u.setScale('x', { min: zx0, max: zx1 });
    building = false;
    if (hl >= 0) hlPlot(u);
    /* A click on a node's legend row highlights that node everywhere
     * (instead of uPlot's hiding the series). */
    var legend = u.root.querySelector('.u-legend');
    if (legend) legend.addEventListener('click', function (e) {
      var tr = e.target.closest('tr.u-series');
      if (!tr) return;
      e.stopPropagation();
      var i = Array.prototype.indexOf.call(tr.parentNode.children, tr);
      if (nodes[i] >= 0) highlight(hl === nodes[i] ? -1 : nodes[i]);
    }, true);
    return u;
  }

  /* Charts are drawn as they come near the window (the first screen and
   * the FIRST charts at once, so the page opens with plots): a report of
   * hundreds of charts opens as fast as one of ten. */
  var FIRST = 2;
  var drawn = 0;
  function draw(i) {
    if (plots[i]) return;
    plots[i] = chart(D.charts[i]);
    document.body.dataset.drawn = String(++drawn);
  }
  function phaseButtons() {
    var box = document.getElementById('phases');
    if (!box || !D.kinds.length) return;
    D.kinds.forEach(function (name, k) {
      var mine = phases.filter(function (p) { return p[0] === k; });
      if (!mine.length) return;
      var btn = document.createElement('button');
      btn.type = 'button';
      btn.textContent = name;
      btn.title = 'Zoom to this phase';
      btn.style.borderLeft = '10px solid ' + PHASE[k % PHASE.length];
      btn.addEventListener('click', function () {
        zoomAll(mine[0][1], mine[mine.length - 1][2]);
      });
      box.appendChild(btn);
    });
  }

function main() {
  plots = D.charts.map(function () { return null; });
  D.heat.forEach(function (h) { heats.push(heat(h)); });
  if (D.timeline) {
    var tlo = timeline(D.timeline);
    if (tlo) heats.push(tlo);
  }
  building = false;
  var H = window.innerHeight || 800, io = null;
  if (window.IntersectionObserver) {
    io = new IntersectionObserver(function (es) {
      es.forEach(function (e) {
        var i = +e.target.dataset.i;
        seen[i] = e.isIntersecting;
        if (!e.isIntersecting) return;
        if (plots[i]) resync(plots[i]);
        else draw(i);
      });
    }, { rootMargin: '400px 0px' });
  }
  D.charts.forEach(function (c, i) {
    var f = document.getElementById(c.id);
    markRange(f);
    f.dataset.i = String(i);
    if (i < FIRST || f.getBoundingClientRect().top < H + 200 || !io) draw(i);
    if (io) io.observe(f);
  });
  /* Printing shows every chart: draw those not scrolled to yet. */
  window.addEventListener('beforeprint', function () {
    D.charts.forEach(function (c, i) { draw(i); });
  });
  heats.forEach(function (o) { o.draw(); });
  phaseButtons();
  /* The statistics per node: a click on a row highlights its node; sort
   * by a column, find a node by name.  Above 1,000 nodes the rows are
   * D.table ([node, text, value, text, value ...] each) and the first
   * SHOW rows of the sorted and found ones are made rows here. */
  var table = document.getElementById('nodes');
  if (table) {
    var tbody = table.tBodies[0], dir = {}, SHOW = 200, sortCol = -1;
    var all = D.table, view = all, note = null;
    tbody.addEventListener('click', function (e) {
      var tr = e.target.closest('tr');
      if (!tr) return;
      var n = +tr.dataset.node;
      highlight(hl === n ? -1 : n);
    });
    var render = function () {
      tbody.textContent = '';
      view.slice(0, SHOW).forEach(function (r) {
        var tr = document.createElement('tr'), td = document.createElement('td');
        tr.dataset.node = String(r[0]);
        td.textContent = D.nodes[r[0]];
        tr.appendChild(td);
        for (var k = 1; k < r.length; k += 2) {
          td = document.createElement('td');
          td.className = 'num';
          td.textContent = r[k];
          if (r[k + 1] != null) td.dataset.v = String(r[k + 1]);
          tr.appendChild(td);
        }
        if (r[0] === hl) tr.classList.add('hl');
        tbody.appendChild(tr);
      });
      note.textContent = view.length > SHOW ? 'The first ' + SHOW + ' of ' + view.length +
        ' nodes; sort by a column or find a node by name to see others.' : view.length + ' nodes.';
    };
    var keyOf = function (r, col) {
      if (all) return col === 0 ? D.nodes[r[0]] : r[2 * col] == null ? -Infinity : r[2 * col];
      var c = r.cells[col];
      return col === 0 ? c.textContent : c.dataset.v === undefined ? -Infinity : +c.dataset.v;
    };
    var nodeOf = function (r) { return all ? r[0] : +r.dataset.node; };
    var sorted = function (rs, col, d) {
      return rs.slice().sort(function (a, b) {
        var x = keyOf(a, col), y = keyOf(b, col);
        return (x < y ? -1 : x > y ? 1 : nodeOf(a) - nodeOf(b)) * -d;
      });
    };
    if (all) {
      note = document.createElement('p');
      note.className = 'help';
      table.parentNode.insertBefore(note, table.nextSibling);
      render();
    }
    var ths = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(ths, function (th, col) {
      th.style.cursor = 'pointer';
      th.addEventListener('click', function () {
        var d = dir[col] = -(dir[col] || -1); // first click: largest first
        sortCol = col;
        if (all) {
          view = sorted(view, col, d);
          render();
        } else {
          sorted(Array.prototype.slice.call(tbody.rows), col, d).forEach(function (r) {
            tbody.appendChild(r);
          });
        }
      });
    });
    var box = document.getElementById('node-filter');
    if (box) {
      box.addEventListener('input', function () {
        var s = box.value.toLowerCase();
        if (all) {
          view = all.filter(function (r) {
            return s === '' || D.nodes[r[0]].toLowerCase().indexOf(s) >= 0;
          });
          if (sortCol >= 0) view = sorted(view, sortCol, dir[sortCol]);
          render();
          return;
        }
        Array.prototype.forEach.call(tbody.rows, function (r) {
          r.hidden = s !== '' && r.cells[0].textContent.toLowerCase().indexOf(s) < 0;
        });
      });
      box.addEventListener('keydown', function (e) {
        if (e.key !== 'Enter') return;
        var first = all ? view[0] : Array.prototype.filter.call(tbody.rows,
          function (r) { return !r.hidden; })[0];
        if (first) highlight(nodeOf(first));
      });
    }
  }

  var q = new URLSearchParams(location.hash.slice(1));
  if (q.has('zoom')) {
    var z = q.get('zoom').split(',').map(Number);
    /* Through the first chart when it is drawn, as a drag on it would. */
    if (z.length === 2 && z[0] < z[1]) {
      if (plots[0]) plots[0].setScale('x', { min: X0 + z[0], max: X0 + z[1] });
      else zoomAll(X0 + z[0], X0 + z[1]);
    }
  }
  if (q.has('node')) highlight(D.nodes.indexOf(q.get('node')));
  var findBox = document.getElementById('node-filter');
  if (q.has('find') && findBox) {
    findBox.value = q.get('find');
    findBox.dispatchEvent(new Event('input'));
  }
  if (q.has('sort') && table && table.tHead.rows[0].cells[+q.get('sort')])
    table.tHead.rows[0].cells[+q.get('sort')].click();
  document.body.dataset.charts = String(plots.length);
  document.body.dataset.heatmaps = String(heats.length);
  performance.mark('pm-drawn');
  /* When the first screen was drawn, in ms since the page's navigation
   * began (parsing, decoding and inflating the series included). */
  document.body.dataset.drawnMs = String(Math.round(performance.now()));
}

  if (!window.DecompressionStream && D.packed) {
    document.getElementById('plots').insertAdjacentText('afterend',
      ' (This browser cannot decompress the series: no DecompressionStream; the charts need ' +
      'Chromium 80, Firefox 113, Safari 16.4 or later.)');
    return;
  }
  load().then(function (u8) {
    BIN = u8;
    main();
  });
})();
