/* nervapack visualize: draws the view data of nervapack_core/code/visualize.py on a canvas.
 *
 * Rules: every text from the graph or the memory reaches the page through textContent (never
 * innerHTML) or is painted with the canvas's fillText (never parsed as markup). Positions come
 * from Python: nothing is simulated here. No library: the page needs no bundle to evaluate
 * before it can draw. Views: the community map, one community, all nodes, a path. */
(function () {
  'use strict';
  var startedAt = performance.now();  // the page is loaded and parsed; nothing of ours has run yet
  var D = JSON.parse(document.getElementById('np-data').textContent);
  var parsedAt = performance.now();
  var N = D.n, E = D.e, C = D.c;
  var nNodes = N.name.length, nComm = C.label.length, nEdges = E.s.length;
  var PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7',
    '#9c755f', '#bab0ac', '#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2',
    '#17becf', '#bcbd22', '#7f7f7f'];
  var KIND_COLORS = { file: '#4e79a7', class: '#f28e2b', function: '#59a14f', variable: '#76b7b2', doc: '#b07aa1',
    import: '#9d9d9d' };
  var KIND_SIZE = { file: 11, class: 9, function: 6, variable: 5, doc: 6, import: 4 };
  var LOOSE = '#c3c7cd';
  // arrow heads only up to ARROWS edges; more than MAX_EDGES edges at once are not drawn at all
  var ARROWS = 600, MAX_EDGES = 40000;

  var state = {
    view: D.start, community: -1, selected: -1, selComm: -1, hideKinds: {}, hideLangs: {},
    colorBy: D.groups ? 'group' : (D.kind === 'graph' ? 'community' : 'kind'),
    matches: null, from: -1, to: -1, path: null, pathEdges: null
  };
  var plot = document.getElementById('np-plot');
  var lower = null;  // lower-cased names, built on the first search
  var adj = null;    // adjacency (CSR), built on the first path search or details
  var members = null;  // nodes of each community

  // ------------------------------------------------------------------ small helpers
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }
  function button(text, onClick, cls) {
    var b = el('button', cls || '', text);
    b.type = 'button';
    b.addEventListener('click', onClick);
    return b;
  }
  function clear(node) { while (node.firstChild) { node.removeChild(node.firstChild); } }
  function kindOf(i) { return D.kinds[N.kind[i]]; }
  function langOf(i) { return D.langs[N.lang[i]]; }
  function fileOf(i) { return D.files[N.file[i]]; }
  function qname(i) { return N.qn[i] || N.name[i]; }
  function where(i) {
    var f = fileOf(i);
    return kindOf(i) === 'file' || !N.start[i] ? f : f + ':' + N.start[i] + (N.end[i] > N.start[i] ? '-' + N.end[i] : '');
  }
  function fmt(n) { return Number(n).toLocaleString('en-US'); }
  function visible(i) { return !state.hideKinds[N.kind[i]] && !state.hideLangs[N.lang[i]]; }
  function commColor(c) { return C.loose[c] ? LOOSE : PALETTE[c % PALETTE.length]; }
  function nodeColor(i) {
    // inside one community its colour says nothing: the kinds are told apart instead
    if (state.colorBy === 'kind' || (state.colorBy === 'community' && state.view === 'community')) { return KIND_COLORS[kindOf(i)] || '#888'; }
    if (state.colorBy === 'language') { return PALETTE[N.lang[i] % PALETTE.length]; }
    if (state.colorBy === 'group' && D.groups) { return D.groups.colors[D.groups.of[i]]; }
    return nComm ? commColor(N.c[i]) : '#4e79a7';
  }
  function getMembers() {
    if (!members) {
      members = [];
      for (var c = 0; c < nComm; c++) { members.push([]); }
      for (var i = 0; i < nNodes; i++) { if (nComm) { members[N.c[i]].push(i); } }
    }
    return members;
  }
  function getAdj() {  // CSR: out[i] / in[i] edge ids
    if (adj) { return adj; }
    function csr(from) {
      var start = new Int32Array(nNodes + 1), list = new Int32Array(nEdges), k;
      for (k = 0; k < nEdges; k++) { start[from[k] + 1]++; }
      for (k = 0; k < nNodes; k++) { start[k + 1] += start[k]; }
      var fill = start.slice(0, nNodes);
      for (k = 0; k < nEdges; k++) { list[fill[from[k]]++] = k; }
      return { start: start, list: list };
    }
    adj = { out: csr(E.s), inn: csr(E.t) };
    return adj;
  }

  // ------------------------------------------------------------------ tooltip
  var tip = document.getElementById('np-tip');
  function showTip(x, y, lines) {
    clear(tip);
    lines.forEach(function (l, k) { if (l) { tip.appendChild(el('div', k ? 'np-muted' : '', l)); } });
    tip.hidden = false;
    tip.style.left = Math.min(x + 14, window.innerWidth - 440) + 'px';
    tip.style.top = (y + 14) + 'px';
  }
  function hideTip() { tip.hidden = true; }

  // ------------------------------------------------------------------ the canvas
  // A scene is what one view draws, in data coordinates: groups of lines (edges), one set of
  // points (nodes, or communities whose radius is in data units), rings (the selection) and
  // labels. paint() draws it at the current zoom; text is drawn with fillText (never parsed).
  var canvas = document.createElement('canvas');
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', 'Drawing of the graph; the search and the details panel give the same information');
  plot.appendChild(canvas);
  var ctx = canvas.getContext('2d');
  var cam = { k: 1, tx: 0, ty: 0 };  // screen = (x * k + tx, -y * k + ty), CSS pixels
  var scene = null, sceneKey = null, W = 0, H = 0, dpr = 1, drawnLabels = [], pending = false;
  function sx(x) { return x * cam.k + cam.tx; }
  function sy(y) { return -y * cam.k + cam.ty; }

  function resize() {
    var r = plot.getBoundingClientRect();
    var w = Math.max(1, Math.floor(r.width)), h = Math.max(1, Math.floor(r.height));
    if (w === W && h === H && dpr === (window.devicePixelRatio || 1)) { return; }
    var first = !W;
    if (!first) { cam.tx += (w - W) / 2; cam.ty += (h - H) / 2; }
    W = w; H = h; dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(W * dpr); canvas.height = Math.round(H * dpr);
    canvas.style.width = W + 'px'; canvas.style.height = H + 'px';
    if (first && scene) { fit(); }
    paint();
  }
  function fit() {
    var b = scene && scene.bbox;
    if (!b || !isFinite(b[0])) { cam = { k: 1, tx: W / 2, ty: H / 2 }; return; }
    var w = Math.max(b[2] - b[0], 1e-6), h = Math.max(b[3] - b[1], 1e-6), pad = 36;
    var k = Math.min((W - 2 * pad) / w, (H - 2 * pad) / h);
    if (!isFinite(k) || k <= 0) { k = 1; }
    k = Math.min(k, 60);
    cam = { k: k, tx: W / 2 - k * (b[0] + b[2]) / 2, ty: H / 2 + k * (b[1] + b[3]) / 2 };
  }
  function schedule() {
    if (pending) { return; }
    pending = true;
    requestAnimationFrame(function () { pending = false; paint(); });
  }

  function paintLines(g) {
    var a = g.a, n = a.length / 4, k;
    ctx.strokeStyle = g.color;
    ctx.lineWidth = g.width;
    ctx.beginPath();
    for (k = 0; k < n; k++) {
      var x1 = sx(a[4 * k]), y1 = sy(a[4 * k + 1]), x2 = sx(a[4 * k + 2]), y2 = sy(a[4 * k + 3]);
      if ((x1 < 0 && x2 < 0) || (x1 > W && x2 > W) || (y1 < 0 && y2 < 0) || (y1 > H && y2 > H)) { continue; }
      ctx.moveTo(x1, y1);
      ctx.lineTo(x2, y2);
    }
    ctx.stroke();
    if (!g.arrows) { return; }
    ctx.fillStyle = g.color;
    ctx.beginPath();
    var size = 3 + 2 * g.width;
    for (k = 0; k < n; k++) {  // a head two thirds of the way, pointing from source to target
      var ax = sx(a[4 * k]), ay = sy(a[4 * k + 1]), bx = sx(a[4 * k + 2]), by = sy(a[4 * k + 3]);
      var dx = bx - ax, dy = by - ay, len = Math.sqrt(dx * dx + dy * dy);
      if (len < 3 * size) { continue; }
      var ux = dx / len, uy = dy / len, mx = ax + dx * 0.66, my = ay + dy * 0.66;
      ctx.moveTo(mx + ux * size, my + uy * size);
      ctx.lineTo(mx - ux * size - uy * size * 0.6, my - uy * size + ux * size * 0.6);
      ctx.lineTo(mx - ux * size + uy * size * 0.6, my - uy * size - ux * size * 0.6);
      ctx.lineTo(mx + ux * size, my + uy * size);
    }
    ctx.fill();
  }

  function radiusOf(P, i) { return P.rData ? P.rData[i] * cam.k : P.r[i]; }
  function paintPoints(P) {
    var runs = P.runs, outline = P.n <= 4000;
    for (var u = 0; u < runs.length; u++) {
      var run = runs[u];
      ctx.globalAlpha = run.alpha;
      ctx.fillStyle = run.color;
      ctx.beginPath();
      for (var v = 0; v < run.idx.length; v++) {
        var i = run.idx[v], x = sx(P.x[i]), y = sy(P.y[i]), r = Math.max(radiusOf(P, i), 1.2);
        if (x + r < 0 || x - r > W || y + r < 0 || y - r > H) { continue; }
        if (P.shape[i] === 1) {
          // back to the start by hand: closePath() on a path of thousands of shapes costs O(n) each
          ctx.moveTo(x, y - r * 1.2); ctx.lineTo(x + r * 1.2, y); ctx.lineTo(x, y + r * 1.2); ctx.lineTo(x - r * 1.2, y);
          ctx.lineTo(x, y - r * 1.2);
        } else {
          ctx.moveTo(x + r, y);
          ctx.arc(x, y, r, 0, 2 * Math.PI);
        }
      }
      ctx.fill();
      if (outline) { ctx.strokeStyle = '#ffffff'; ctx.lineWidth = P.rData ? 1.2 : 0.6; ctx.stroke(); }
    }
    ctx.globalAlpha = 1;
  }

  function paintLabels(labels) {
    var boxes = [];
    drawnLabels = [];
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    ctx.lineJoin = 'round';
    labels.forEach(function (L) {
      var lines = L.lines, x = sx(L.x), y = sy(L.y);
      if (L.fitR !== undefined) {  // a community's label: only inside a circle large enough to hold it
        var d = 2 * L.fitR * cam.k, room = Math.floor(d * 0.9 / 6.2);
        if (d < 46 || room < 9) { return; }
        lines = lines.map(function (t) { return t.length > room ? t.slice(0, room - 1) + '…' : t; });
      }
      var size = L.size || 11, lh = size + 2;
      ctx.font = (L.bold ? '600 ' : '') + size + 'px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
      var w = 0;
      lines.forEach(function (t) { w = Math.max(w, ctx.measureText(t).width); });
      var h = lines.length * lh, cy = y + (L.dy || 0) - (L.dy < 0 ? h / 2 : L.dy > 0 ? -h / 2 : 0);
      var box = [x - w / 2 - 2, cy - h / 2 - 1, x + w / 2 + 2, cy + h / 2 + 1];
      if (box[2] < 0 || box[0] > W || box[3] < 0 || box[1] > H) { return; }
      for (var b = 0; b < boxes.length; b++) {  // never on top of a label already drawn
        var o = boxes[b];
        if (box[0] < o[2] && box[2] > o[0] && box[1] < o[3] && box[3] > o[1]) { return; }
      }
      boxes.push(box);
      lines.forEach(function (t, j) {
        var ty = cy - h / 2 + lh * (j + 0.5);
        ctx.strokeStyle = 'rgba(255,255,255,0.9)';
        ctx.lineWidth = 3;
        ctx.strokeText(t, x, ty);
        ctx.fillStyle = L.color || '#1f2328';
        ctx.fillText(t, x, ty);
      });
      drawnLabels.push(lines.join('\n'));
    });
  }

  function paint() {
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    if (!scene) { return; }
    scene.lines.forEach(paintLines);
    if (scene.points) { paintPoints(scene.points); }
    scene.rings.forEach(function (g) {
      ctx.strokeStyle = g.color; ctx.lineWidth = g.width;
      ctx.beginPath(); ctx.arc(sx(g.x), sy(g.y), g.rData ? g.rData * cam.k + 3 : g.r, 0, 2 * Math.PI); ctx.stroke();
    });
    paintLabels(scene.labels);
  }

  function makePoints(ids, xs, ys, opts) {
    // opts: rData(i) or r(i) (px), shape(i), color(i), alpha(i); drawn in runs of one colour and alpha
    var n = ids.length, P = { n: n, id: Int32Array.from(ids), x: new Float64Array(n), y: new Float64Array(n),
      shape: new Uint8Array(n), kind: opts.kind };
    if (opts.rData) { P.rData = new Float32Array(n); } else { P.r = new Float32Array(n); }
    var keyOf = {}, runs = [];
    for (var v = 0; v < n; v++) {
      var i = ids[v];
      P.x[v] = xs(i); P.y[v] = ys(i);
      if (opts.rData) { P.rData[v] = opts.rData(i); } else { P.r[v] = opts.r(i); }
      P.shape[v] = opts.shape ? opts.shape(i) : 0;
      var color = opts.color(i), alpha = opts.alpha ? opts.alpha(i) : 0.9, key = alpha + color;
      if (!(key in keyOf)) { keyOf[key] = runs.length; runs.push({ color: color, alpha: alpha, idx: [] }); }
      runs[keyOf[key]].idx.push(v);
    }
    runs.sort(function (a, b) { return a.alpha - b.alpha; });  // dimmed first, highlighted on top
    P.runs = runs;
    return P;
  }
  function lineGroup(list, xs, ys, color, width, arrows) {
    var a = new Float64Array(list.length * 4);
    list.forEach(function (k, j) {
      a[4 * j] = xs(E.s[k]); a[4 * j + 1] = ys(E.s[k]); a[4 * j + 2] = xs(E.t[k]); a[4 * j + 3] = ys(E.t[k]);
    });
    return { a: a, color: color, width: width, arrows: arrows };
  }
  function bboxOf(P, pad) {
    var b = [Infinity, Infinity, -Infinity, -Infinity];
    for (var v = 0; v < P.n; v++) {
      var r = P.rData ? P.rData[v] : 0;
      b[0] = Math.min(b[0], P.x[v] - r); b[1] = Math.min(b[1], P.y[v] - r);
      b[2] = Math.max(b[2], P.x[v] + r); b[3] = Math.max(b[3], P.y[v] + r);
    }
    if (pad) { b[0] -= pad; b[1] -= pad; b[2] += pad; b[3] += pad; }
    return b;
  }

  // what is under the pointer: the nearest node within its radius (+3 px), or the community circle
  function pick(mx, my) {
    var P = scene && scene.points;
    if (!P) { return null; }
    var best = -1, bestD = Infinity;
    for (var v = 0; v < P.n; v++) {
      var dx = sx(P.x[v]) - mx, dy = sy(P.y[v]) - my, d = Math.sqrt(dx * dx + dy * dy), r = radiusOf(P, v);
      if (d <= Math.max(r, 1.2) + 3 && d - r < bestD) { best = v; bestD = d - r; }
    }
    return best < 0 ? null : { kind: P.kind, id: P.id[best] };
  }

  // ------------------------------------------------------------------ views
  function nodesView(idx, notes) {
    var vis = idx.filter(visible);
    var mark = new Uint8Array(nNodes);
    vis.forEach(function (i) { mark[i] = 1; });
    var a = getAdj(), list = [];
    vis.forEach(function (i) {
      for (var p = a.out.start[i]; p < a.out.start[i + 1]; p++) {
        var k = a.out.list[p];
        if (mark[E.t[k]]) { list.push(k); }
      }
    });
    var X = function (i) { return N.x[i]; }, Y = function (i) { return N.y[i]; };
    var sc = { lines: [], rings: [], labels: [] };
    if (list.length > MAX_EDGES) {
      notes.push(fmt(list.length) + ' edges not drawn (too many at once): open a community or search to see them.');
    } else if (list.length) {
      sc.lines.push(lineGroup(list, X, Y, 'rgba(120,130,140,0.25)', 0.6, list.length <= ARROWS));
    }
    var m = state.matches, sel = state.selected;
    if (sel >= 0 && mark[sel]) {  // the selected node's own links, in colour, with their direction
      var mine = [];
      for (var p = a.out.start[sel]; p < a.out.start[sel + 1]; p++) { if (mark[E.t[a.out.list[p]]]) { mine.push(a.out.list[p]); } }
      for (p = a.inn.start[sel]; p < a.inn.start[sel + 1]; p++) { if (mark[E.s[a.inn.list[p]]]) { mine.push(a.inn.list[p]); } }
      if (mine.length) {  // a hub's hundreds of links in red would hide everything: fainter then
        var hub = mine.length > 120;
        sc.lines.push(lineGroup(mine, X, Y, hub ? 'rgba(207,34,46,0.3)' : 'rgba(207,34,46,0.8)', hub ? 0.8 : 1.3,
          mine.length <= 120));
      }
    }
    var targets = {};
    (D.targets || []).forEach(function (i) { targets[i] = 1; });
    var fileKind = D.kinds.indexOf('file');
    sc.points = makePoints(vis, X, Y, { kind: 'node',
      r: function (i) { return ((KIND_SIZE[kindOf(i)] || 6) + (targets[i] ? 6 : 0) + (m && m.has(i) ? 5 : 0)) / 2; },
      shape: function (i) { return N.kind[i] === fileKind ? 1 : 0; }, color: nodeColor,
      alpha: m ? function (i) { return m.has(i) ? 0.95 : 0.15; } : null });
    sc.bbox = bboxOf(sc.points, 1);
    if (sel >= 0 && mark[sel]) { sc.rings.push({ x: N.x[sel], y: N.y[sel], r: 11, color: '#cf222e', width: 2.5 }); }
    // labels, most important first (a label never covers another): selection, targets, matches, first ring, files
    var lab = [];
    if (sel >= 0 && mark[sel]) { lab.push(sel); }
    Object.keys(targets).forEach(function (i) { if (mark[i]) { lab.push(+i); } });
    if (m && m.size <= 30) { m.forEach(function (i) { if (mark[i]) { lab.push(i); } }); }
    if (D.distance) {  // a neighbourhood: name the first ring when it is small enough to read
      var ring = vis.filter(function (i) { return D.distance[i] === 1; });
      if (ring.length <= 60) { lab = lab.concat(ring); }
    }
    var files = vis.filter(function (i) { return kindOf(i) === 'file'; });
    if (vis.length <= 60) { files = vis; }
    files.sort(function (p, q) { return N.deg[q] - N.deg[p]; });
    lab = lab.concat(files.slice(0, 400));
    var seen = {};
    lab.forEach(function (i) {
      if (seen[i]) { return; }
      seen[i] = 1;
      sc.labels.push({ x: N.x[i], y: N.y[i], lines: [N.name[i]], dy: -12, bold: i === sel });
    });
    return { scene: sc, shown: vis.length, edges: list.length };
  }

  function mapView() {
    var idx = [], sc = { lines: [], rings: [], labels: [] };
    for (var c = 0; c < nComm; c++) { idx.push(c); }
    var hit = null;
    if (state.matches) {
      hit = {};
      state.matches.forEach(function (i) { hit[N.c[i]] = 1; });
    }
    var X = function (c) { return C.x[c]; }, Y = function (c) { return C.y[c]; };
    sc.points = makePoints(idx, X, Y, { kind: 'community', rData: function (c) { return C.r[c]; }, color: commColor,
      alpha: function (c) { return hit && !hit[c] ? 0.15 : 0.8; } });
    sc.bbox = bboxOf(sc.points, 0);
    if (state.selComm >= 0) {
      var s = state.selComm, links = C.links[s], wmax = links.length ? links[0][1] : 1;
      links.forEach(function (l) {
        var g = { a: new Float64Array([C.x[s], C.y[s], C.x[l[0]], C.y[l[0]]]), color: 'rgba(207,34,46,0.6)',
          width: 1 + 5 * l[1] / wmax, arrows: false };
        sc.lines.push(g);
      });
      sc.rings.push({ x: C.x[s], y: C.y[s], rData: C.r[s], color: '#cf222e', width: 3 });
    }
    idx.slice().sort(function (p, q) { return C.size[q] - C.size[p]; }).forEach(function (c) {
      sc.labels.push({ x: C.x[c], y: C.y[c], fitR: C.r[c], lines: [C.name[c], C.where[c], fmt(C.size[c]) + ' nodes'],
        bold: c === state.selComm });
    });
    return { scene: sc, shown: nComm, edges: 0 };
  }

  function pathView() {  // the path as a chain, left to right, each link with its kind and direction
    var p = state.path, pe = state.pathEdges, px = {}, py = {}, sc = { lines: [], rings: [], labels: [] };
    p.forEach(function (i, k) { px[i] = k * 3; py[i] = (k % 2) * 0.8; });
    var X = function (i) { return px[i]; }, Y = function (i) { return py[i]; };
    sc.lines.push(lineGroup(pe, X, Y, 'rgba(207,34,46,0.85)', 2, true));
    sc.points = makePoints(p, X, Y, { kind: 'node', r: function () { return 7; }, color: nodeColor,
      shape: function (i) { return kindOf(i) === 'file' ? 1 : 0; } });
    sc.bbox = bboxOf(sc.points, 1.2);
    p.forEach(function (i, k) {
      sc.labels.push({ x: px[i], y: py[i], lines: [qname(i), kindOf(i)], dy: k % 2 ? -14 : 14, bold: true });
    });
    pe.forEach(function (k) {
      sc.labels.push({ x: (px[E.s[k]] + px[E.t[k]]) / 2, y: (py[E.s[k]] + py[E.t[k]]) / 2, lines: [D.edgeKinds[E.k[k]]],
        dy: 12, size: 10, color: '#9a1b24' });
    });
    return { scene: sc, shown: p.length, edges: pe.length };
  }

  // ------------------------------------------------------------------ drawing
  function draw() {
    hideTip();
    var notes = (D.notes || []).slice(), v, idx;
    if (state.view === 'map') { v = mapView(); }
    else if (state.view === 'community') { v = nodesView(getMembers()[state.community], notes); }
    else if (state.view === 'path' && state.path) { v = pathView(); }
    else {
      idx = [];
      for (var i = 0; i < nNodes; i++) { idx.push(i); }
      v = nodesView(idx, notes);
    }
    var key = state.view + ':' + state.community + ':' + (state.view === 'path' ? (state.path || []).join(',') : '');
    scene = v.scene;
    if (key !== sceneKey) { fit(); sceneKey = key; }  // a new view is fitted; the same one keeps its zoom
    var status = document.getElementById('np-status');
    var what = state.view === 'map' ? fmt(v.shown) + ' communities (circle area: nodes) — click one, click again to open it'
      : fmt(v.shown) + ' nodes, ' + fmt(v.edges) + ' edges';
    status.textContent = [what].concat(notes).join(' · ') + '  (drag to pan, wheel to zoom)';
    renderCrumbs();
    paint();
    window.nervapack.draws += 1;
    return Promise.resolve();
  }

  // ------------------------------------------------------------------ pointer
  function wire() {
    var drag = null;
    function local(e) { var r = canvas.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; }
    function zoomAt(mx, my, f) {
      var k = Math.max(1e-4, Math.min(cam.k * f, 400));
      f = k / cam.k;
      cam.tx = mx - (mx - cam.tx) * f; cam.ty = my - (my - cam.ty) * f; cam.k = k;
      schedule();
    }
    canvas.addEventListener('wheel', function (e) {
      e.preventDefault();
      var p = local(e);
      zoomAt(p[0], p[1], Math.exp(-e.deltaY * (e.deltaMode ? 0.05 : 0.0015)));
    }, { passive: false });
    canvas.addEventListener('pointerdown', function (e) {
      var p = local(e);
      drag = { x: p[0], y: p[1], tx: cam.tx, ty: cam.ty, moved: false };
      canvas.setPointerCapture(e.pointerId);
    });
    canvas.addEventListener('pointermove', function (e) {
      var p = local(e);
      if (drag) {
        var dx = p[0] - drag.x, dy = p[1] - drag.y;
        if (Math.abs(dx) + Math.abs(dy) > 3) { drag.moved = true; }
        if (drag.moved) { cam.tx = drag.tx + dx; cam.ty = drag.ty + dy; hideTip(); schedule(); }
        return;
      }
      var hit = pick(p[0], p[1]);
      canvas.style.cursor = hit ? 'pointer' : 'grab';
      if (!hit) { hideTip(); return; }
      if (hit.kind === 'community') {
        showTip(e.clientX, e.clientY, [C.label[hit.id], fmt(C.size[hit.id]) + ' nodes in ' + fmt(C.files[hit.id]) + ' files']);
      } else {
        var i = hit.id;
        showTip(e.clientX, e.clientY, [kindOf(i) + ' ' + qname(i), where(i), N.sig[i] ? N.sig[i].split('\n')[0] : '']);
      }
    });
    canvas.addEventListener('pointerup', function (e) {
      var was = drag;
      drag = null;
      if (!was || was.moved) { return; }
      var p = local(e), hit = pick(p[0], p[1]);
      if (!hit) { return; }
      if (hit.kind === 'community') {
        if (state.selComm === hit.id) { openCommunity(hit.id); return; }
        state.selComm = hit.id;
        showCommunity(hit.id);
        draw();
      } else {
        selectNode(hit.id, false);
      }
    });
    canvas.addEventListener('pointerleave', hideTip);
    canvas.addEventListener('dblclick', function (e) { var p = local(e); zoomAt(p[0], p[1], 2); });
    var tools = el('div', 'np-tools');
    tools.appendChild(button('+', function () { zoomAt(W / 2, H / 2, 1.6); }));
    tools.appendChild(button('−', function () { zoomAt(W / 2, H / 2, 1 / 1.6); }));
    tools.appendChild(button('Fit', function () { fit(); paint(); }));
    plot.appendChild(tools);
    if (window.ResizeObserver) { new ResizeObserver(resize).observe(plot); }
    window.addEventListener('resize', resize);
  }

  // ------------------------------------------------------------------ navigation
  function renderCrumbs() {
    var nav = document.getElementById('np-crumbs');
    clear(nav);
    function crumb(text, view, active, fn) {
      var b = button(text, fn || function () { state.view = view; state.community = -1; draw(); });
      if (active) { b.className = 'np-current'; }
      nav.appendChild(b);
    }
    if (D.kind === 'graph' && nComm) { crumb('Community map', 'map', state.view === 'map'); }
    crumb('All nodes', 'all', state.view === 'all');
    if (state.community >= 0) {
      crumb('Community: ' + C.label[state.community], 'community', state.view === 'community',
        function () { openCommunity(state.community); });
    }
    if (state.path) { crumb('Path', 'path', state.view === 'path'); }
  }

  function openCommunity(c) {
    state.view = 'community';
    state.community = c;
    state.selComm = c;
    return draw();
  }

  function selectNode(i, move) {
    state.selected = i;
    if (move !== false) {
      if (D.kind === 'graph' && nComm && (state.view === 'map' || state.view === 'path' ||
          (state.view === 'community' && N.c[i] !== state.community))) {
        state.view = 'community';
        state.community = N.c[i];
      }
      if (state.hideKinds[N.kind[i]]) { delete state.hideKinds[N.kind[i]]; syncFilters(); }
      if (state.hideLangs[N.lang[i]]) { delete state.hideLangs[N.lang[i]]; syncFilters(); }
    }
    showNode(i);
    return draw();
  }

  // ------------------------------------------------------------------ details
  var details = document.getElementById('np-details');
  function kv(box, key, value) {
    if (value === '' || value === null || value === undefined) { return; }
    box.appendChild(el('span', '', key));
    box.appendChild(el('span', '', value));
  }
  function nodeLink(i, text) {
    return button(text || qname(i), function () { selectNode(i); }, 'np-link');
  }

  function showNode(i) {
    clear(details);
    details.appendChild(el('div', 'np-muted', kindOf(i)));
    details.appendChild(el('h2', '', qname(i)));
    var box = el('div', 'np-kv');
    kv(box, 'file', fileOf(i));
    if (kindOf(i) !== 'file') { kv(box, 'lines', N.start[i] ? N.start[i] + '–' + N.end[i] : ''); }
    kv(box, 'language', langOf(i));
    if (nComm && D.kind !== 'dependencies') { kv(box, 'community', C.label[N.c[i]]); }
    if (D.groups) { kv(box, 'status', D.groups.names[D.groups.of[i]]); }
    if (D.distance) { kv(box, 'hops', D.distance[i]); }
    details.appendChild(box);
    var row = el('div', 'np-row');
    row.appendChild(button('Path from here', function () { setEnd('from', i); }));
    row.appendChild(button('Path to here', function () { setEnd('to', i); }));
    if (nComm && D.kind === 'graph' && !(state.view === 'community' && state.community === N.c[i])) {
      row.appendChild(button('Open its community', function () { openCommunity(N.c[i]); }));
    }
    details.appendChild(row);
    if (N.sig[i]) { details.appendChild(el('h3', '', 'Signature')); details.appendChild(el('pre', '', N.sig[i])); }
    if (N.doc[i]) { details.appendChild(el('h3', '', 'Docstring')); details.appendChild(el('pre', '', N.doc[i])); }
    var mems = (D.touch && D.touch[i]) || [];
    details.appendChild(el('h3', '', 'Decisions touching it (' + mems.length + ')'));
    if (!mems.length) {
      details.appendChild(el('div', 'np-muted', D.memories && D.memories.length ? 'None.'
        : 'None recorded (no decision memory, or none touches this code).'));
    }
    mems.forEach(function (j) {
      var m = D.memories[j], d = el('div', 'np-memory' + (m.current ? '' : ' np-old'));
      d.appendChild(el('div', '', m.content));
      if (m.rationale) { d.appendChild(el('div', 'np-muted', 'Why: ' + m.rationale)); }
      d.appendChild(el('div', 'np-muted', m.kind + ' · ' + String(m.valid_from).slice(0, 10) +
        (m.current ? '' : ' · no longer current')));
      details.appendChild(d);
    });
    var a = getAdj(), rows = [];
    for (var p = a.out.start[i]; p < a.out.start[i + 1]; p++) { rows.push([a.out.list[p], 'out']); }
    for (p = a.inn.start[i]; p < a.inn.start[i + 1]; p++) { rows.push([a.inn.list[p], 'in']); }
    details.appendChild(el('h3', '', 'Links (' + rows.length + ')'));
    var ul = el('ul');
    rows.slice(0, 60).forEach(function (r) {
      var k = r[0], other = r[1] === 'out' ? E.t[k] : E.s[k], li = el('li');
      li.appendChild(el('span', 'np-edge', r[1] === 'out' ? D.edgeKinds[E.k[k]] + ' → ' : '← ' + D.edgeKinds[E.k[k]] + ' '));
      li.appendChild(nodeLink(other));
      ul.appendChild(li);
    });
    details.appendChild(ul);
    if (rows.length > 60) { details.appendChild(el('div', 'np-muted', '… and ' + (rows.length - 60) + ' more')); }
  }

  function showCommunity(c) {
    clear(details);
    details.appendChild(el('div', 'np-muted', C.loose[c] ? 'files linked to nothing, by folder' : 'community'));
    details.appendChild(el('h2', '', C.label[c]));
    var box = el('div', 'np-kv');
    kv(box, 'nodes', fmt(C.size[c]));
    kv(box, 'files', fmt(C.files[c]));
    details.appendChild(box);
    details.appendChild(button('Open this community', function () { openCommunity(c); }));
    details.appendChild(el('h3', '', 'Folders'));
    var ul = el('ul');
    C.folders[c].forEach(function (f) { ul.appendChild(el('li', '', f[0] + '/ — ' + fmt(f[1]) + ' nodes')); });
    details.appendChild(ul);
    if (C.top[c].length) {
      details.appendChild(el('h3', '', 'Best connected'));
      ul = el('ul');
      C.top[c].forEach(function (i) { var li = el('li'); li.appendChild(nodeLink(i)); ul.appendChild(li); });
      details.appendChild(ul);
    }
    if (C.links[c].length) {
      details.appendChild(el('h3', '', 'Most linked communities'));
      ul = el('ul');
      C.links[c].forEach(function (l) {
        var li = el('li');
        li.appendChild(button(C.label[l[0]], function () { state.selComm = l[0]; showCommunity(l[0]); draw(); },
          'np-link'));
        li.appendChild(el('span', 'np-muted', ' ' + fmt(l[1]) + ' edges'));
        ul.appendChild(li);
      });
      details.appendChild(ul);
    }
  }

  // ------------------------------------------------------------------ search
  var searchBox = document.getElementById('np-search'), results = document.getElementById('np-results');
  var TEST_PATH = /(^|\/)(tests?|testing)(\/|_)|(^|\/)test_[^/]*$|_tests?\.py$/;
  function search(q) {
    var raw = q.trim();
    q = raw.toLowerCase();
    if (!q) { return []; }
    if (!lower) {
      lower = { name: N.name.map(function (s) { return s.toLowerCase(); }),
        qn: N.qn.map(function (s) { return s.toLowerCase(); }),
        file: D.files.map(function (s) { return s.toLowerCase(); }) };
    }
    var hits = [];
    for (var i = 0; i < nNodes; i++) {
      if (!visible(i)) { continue; }
      var n = lower.name[i], qn = lower.qn[i] || n, score = -1;
      if (N.name[i] === raw || N.qn[i] === raw) { score = 0; }  // exactly as typed first
      else if (n === q || qn === q) { score = 1; }
      else if (qn.slice(-q.length - 1) === '.' + q) { score = 2; }
      else if (n.indexOf(q) === 0) { score = 3; }
      else if (qn.indexOf(q) >= 0) { score = 4; }
      else if (kindOf(i) === 'file' && lower.file[N.file[i]].indexOf(q) >= 0) { score = 5; }
      if (score < 0) { continue; }
      var k = kindOf(i), rank = k === 'class' || k === 'function' ? 0 : k === 'file' ? 1 : 2;
      var test = TEST_PATH.test(lower.file[N.file[i]]) ? 1 : 0;
      hits.push([score, test, rank, N.name[i].length, i]);
    }
    hits.sort(function (a, b) { return a[0] - b[0] || a[1] - b[1] || a[2] - b[2] || a[3] - b[3] || a[4] - b[4]; });
    return hits.map(function (h) { return h[4]; });
  }
  function runSearch() {
    var q = searchBox.value, found = search(q);
    clear(results);
    state.matches = q.trim() ? new Set(found.slice(0, 2000)) : null;
    found.slice(0, 50).forEach(function (i) {
      var li = el('li'), b = button('', function () { selectNode(i); }, 'np-hit');
      b.appendChild(el('span', 'np-name', qname(i)));
      b.appendChild(el('span', 'np-where', kindOf(i) + ' · ' + where(i)));
      li.appendChild(b);
      li.appendChild(button('from', function () { setEnd('from', i); }));
      li.appendChild(button('to', function () { setEnd('to', i); }));
      results.appendChild(li);
    });
    results.setAttribute('data-query', q);  // which query the list answers (tests wait for it)
    if (q.trim()) {
      results.appendChild(el('li', 'np-muted', found.length ? fmt(found.length) + ' match(es)' +
        (found.length > 50 ? ', first 50 listed' : '') : 'No match.'));
    }
    draw();
  }
  var timer = null;
  searchBox.addEventListener('input', function () { clearTimeout(timer); timer = setTimeout(runSearch, 150); });
  searchBox.addEventListener('keydown', function (e) {
    if (e.key === 'Enter') { clearTimeout(timer); runSearch(); var first = search(searchBox.value)[0];
      if (first !== undefined) { selectNode(first); } }
  });

  // ------------------------------------------------------------------ path finder
  function setEnd(which, i) {
    state[which] = i;
    document.getElementById(which === 'from' ? 'np-path-from' : 'np-path-to').textContent = qname(i);
    if (state.from >= 0 && state.to >= 0) { findPath(); }
  }
  function bfs(a, b, directed) {
    var adjs = getAdj(), prev = new Int32Array(nNodes).fill(-2), via = new Int32Array(nNodes).fill(-1);
    var queue = new Int32Array(nNodes), head = 0, tail = 0;
    prev[a] = -1; queue[tail++] = a;
    while (head < tail) {
      var i = queue[head++];
      if (i === b) { break; }
      var sides = directed ? [adjs.out] : [adjs.out, adjs.inn];
      for (var s = 0; s < sides.length; s++) {
        var side = sides[s];
        for (var p = side.start[i]; p < side.start[i + 1]; p++) {
          var k = side.list[p], j = side === adjs.out ? E.t[k] : E.s[k];
          if (prev[j] === -2) { prev[j] = i; via[j] = k; queue[tail++] = j; }
        }
      }
    }
    if (prev[b] === -2) { return null; }
    var nodes = [], edges = [];
    for (var x = b; x !== -1; x = prev[x]) { nodes.push(x); if (via[x] >= 0) { edges.push(via[x]); } }
    return { nodes: nodes.reverse(), edges: edges.reverse() };
  }
  function findPath() {
    var out = document.getElementById('np-path-result');
    clear(out);
    if (state.from < 0 || state.to < 0) {
      out.appendChild(el('div', 'np-muted', 'Pick two nodes: "Path from here" / "Path to here" in a node\'s details, ' +
        'or "from" / "to" next to a search result.'));
      return;
    }
    var directed = document.getElementById('np-path-directed').checked;
    var found = bfs(state.from, state.to, directed);
    if (!found) {
      state.path = null;
      if (state.view === 'path') { state.view = D.start; }
      out.appendChild(el('div', 'np-note', 'No path from ' + qname(state.from) + ' to ' + qname(state.to) +
        (directed ? ' following edge direction.' : '.')));
      draw();
      return;
    }
    state.path = found.nodes;
    state.pathEdges = found.edges;
    out.appendChild(el('div', '', (found.nodes.length - 1) + ' step(s):'));
    var ol = el('ol');
    found.nodes.forEach(function (i, k) {
      var li = el('li');
      if (k > 0) {
        var e = found.edges[k - 1], fwd = E.t[e] === i;
        li.appendChild(el('span', 'np-edge', fwd ? D.edgeKinds[E.k[e]] + ' → ' : '← ' + D.edgeKinds[E.k[e]] + ' '));
      }
      li.appendChild(nodeLink(i));
      ol.appendChild(li);
    });
    out.appendChild(ol);
    state.view = 'path';
    draw();
  }
  document.getElementById('np-path-find').addEventListener('click', findPath);
  document.getElementById('np-path-clear').addEventListener('click', function () {
    state.from = state.to = -1; state.path = state.pathEdges = null;
    document.getElementById('np-path-from').textContent = '—';
    document.getElementById('np-path-to').textContent = '—';
    clear(document.getElementById('np-path-result'));
    if (state.view === 'path') { state.view = D.start; }
    draw();
  });

  // ------------------------------------------------------------------ filters and colours
  var colorSel = document.getElementById('np-color');
  function option(value, text) { var o = el('option', '', text); o.value = value; colorSel.appendChild(o); }
  if (D.groups) { option('group', 'status'); }
  if (nComm && D.kind !== 'dependencies') { option('community', 'community'); }
  option('kind', 'kind');
  option('language', 'language');
  colorSel.value = state.colorBy;
  colorSel.addEventListener('change', function () { state.colorBy = colorSel.value; legend(); draw(); });
  function legend() {
    var box = document.getElementById('np-legend');
    clear(box);
    var items = [];
    if (state.colorBy === 'kind') { D.kinds.forEach(function (k) { items.push([KIND_COLORS[k] || '#888', k]); }); }
    else if (state.colorBy === 'language') {
      D.langs.forEach(function (l, k) { items.push([PALETTE[k % PALETTE.length], l || '(none)']); });
    } else if (state.colorBy === 'group' && D.groups) {
      D.groups.names.forEach(function (n, k) { items.push([D.groups.colors[k], n]); });
    } else {
      box.appendChild(el('div', 'np-muted', 'One colour per community (inside one: per kind, as below); grey: ' +
        'files linked to nothing.'));
      D.kinds.forEach(function (k) { items.push([KIND_COLORS[k] || '#888', k]); });
    }
    items.forEach(function (it) {
      var d = el('div'), sw = el('span', 'np-swatch');
      sw.style.background = it[0];
      d.appendChild(sw);
      d.appendChild(document.createTextNode(it[1]));
      box.appendChild(d);
    });
  }
  function counts(field, n) {
    var out = new Array(n).fill(0);
    for (var i = 0; i < nNodes; i++) { out[N[field][i]]++; }
    return out;
  }
  var checks = { kind: [], lang: [] };
  function filterBox(id, names, field, hidden, list) {
    var box = document.getElementById(id), cnt = counts(field, names.length);
    names.forEach(function (name, k) {
      var lab = el('label', 'np-check'), cb = el('input');
      cb.type = 'checkbox'; cb.checked = true; cb.value = String(k);
      cb.addEventListener('change', function () {
        if (cb.checked) { delete hidden[k]; } else { hidden[k] = 1; }
        if (searchBox.value.trim()) { runSearch(); } else { draw(); }
      });
      lab.appendChild(cb);
      lab.appendChild(document.createTextNode(name || '(none)'));
      lab.appendChild(el('span', 'np-count', fmt(cnt[k])));
      box.appendChild(lab);
      list.push(cb);
    });
  }
  function syncFilters() {
    checks.kind.forEach(function (cb) { cb.checked = !state.hideKinds[cb.value]; });
    checks.lang.forEach(function (cb) { cb.checked = !state.hideLangs[cb.value]; });
  }
  filterBox('np-kinds', D.kinds, 'kind', state.hideKinds, checks.kind);
  filterBox('np-langs', D.langs, 'lang', state.hideLangs, checks.lang);
  legend();

  // ------------------------------------------------------------------ start
  document.getElementById('np-title').textContent = D.title;
  document.getElementById('np-sub').textContent = D.subtitle;
  if (!nComm || D.kind !== 'graph') { if (state.view === 'map') { state.view = 'all'; } }
  if (D.targets && D.targets.length) { showNode(D.targets[0]); state.selected = D.targets[0]; }

  // for tests and embedding pages: where a node is drawn now (client pixels), and a few actions
  window.nervapack = {
    data: D, state: state, select: selectNode, startedAt: startedAt, parsedAt: parsedAt, openCommunity: openCommunity, search: search,
    pointOf: function (i) { return screenOf('node', i); },
    communityPoint: function (c) { return screenOf('community', c); },
    labels: function () { return drawnLabels.slice(); },
    camera: function () { return { k: cam.k, tx: cam.tx, ty: cam.ty }; },
    draws: 0
  };
  function screenOf(kind, id) {  // where a node or community is drawn now, in client pixels
    var P = scene && scene.points, r = canvas.getBoundingClientRect();
    if (!P || P.kind !== kind) { return null; }
    for (var v = 0; v < P.n; v++) {
      if (P.id[v] === id) { return { x: r.left + sx(P.x[v]), y: r.top + sy(P.y[v]) }; }
    }
    return null;
  }
  resize();
  draw().then(function () {
    wire();
    document.documentElement.setAttribute('data-ready', '1');
    window.nervapack.readyAt = performance.now();
  });
})();
